# Sourced by the installers of pinned npm packages (k8s/tools, tests/sdk, tests/tokenizer):
#   npm_ci_dir DIR: makes DIR and prints its absolute path.
#   npm_ci_into NAME SRC DIR: installs SRC's package-lock.json (npm ci, no install scripts) into
#   DIR, one install at a time (tests running side by side may ask at once), and nothing when DIR
#   already holds this lock file's install. Needs node >= 18 and npm (Debian 12: apt-get install
#   nodejs npm); NAME names the tools in messages. The caller holds DIR's lock until it exits.
npm_ci_dir() {
    mkdir -p "$1" && cd "$1" && pwd
}

npm_ci_into() {
    local name=$1 src=$2 dir=$3 tool
    exec 9>"$dir/.install.lock"
    flock 9
    if [ -d "$dir/node_modules" ] && cmp -s "$src/package-lock.json" "$dir/package-lock.json"; then
        return 0
    fi
    for tool in node npm; do
        command -v "$tool" >/dev/null ||
            { echo "$name: '$tool' is missing (Debian 12: apt-get install nodejs npm)" >&2; return 1; }
    done
    cp "$src/package.json" "$src/package-lock.json" "$src/.npmrc" "$dir/"
    (cd "$dir" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error)
}
