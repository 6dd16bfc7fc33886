#!/bin/bash
# Installs the official OpenAI SDK pinned in package-lock.json (tests/npm_ci.sh) into DIR (default
# build/sdk-tools), for tests/integration/test_mock_openai_sdk.sh. Needs node >= 18 and npm. Does
# nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
source "$src/../npm_ci.sh"
dir=$(npm_ci_dir "${1:-build/sdk-tools}")
npm_ci_into "sdk tools" "$src" "$dir"
