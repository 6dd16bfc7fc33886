#!/bin/bash
# Installs the official OpenAI SDK pinned in package-lock.json (npm ci, no install scripts) into
# DIR (default build/sdk-tools), for tests/integration/test_mock_openai_sdk.sh. Needs node >= 18
# and npm. Does nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/sdk-tools}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
exec 9>"$dir/.install.lock"
flock 9
if [ -d "$dir/node_modules/openai" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
    exit 0
fi
for tool in node npm; do
    command -v "$tool" >/dev/null ||
        { echo "sdk tools: '$tool' is missing (Debian 12: apt-get install nodejs npm)" >&2; exit 1; }
done
cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$dir/"
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
