#!/bin/bash
# ctest: parallel
# k8s/Dockerfile offline (no image is built here): both stages start from Debian 12, every package
# either stage installs exists in Debian 12 (apt-cache), the final stage installs no compiler or
# -dev package, every shared library the built binary links comes from a package the final stage
# installs or from Debian's essential set (dpkg -S, apt-cache depends --recurse), and the final
# stage runs as a non-root user.
source "$(dirname "$0")/protocol_lib.sh"
here=$(cd "$(dirname "$0")" && pwd)
src=${STAMPEDE_SRC:-$(cd "$here/../.." && pwd)}
df="$src/k8s/Dockerfile"
[[ "$(apt-cache policy libc6)" =~ Candidate:\ [0-9] ]] ||
    fail "no apt package lists on this machine (apt-get update) to check the Dockerfile against"

python3 - "$df" >"$WORK/stages" <<'PY'
import re, sys
text = open(sys.argv[1]).read().replace("\\\n", " ")
stages = re.split(r"^FROM ", text, flags=re.M)[1:]
for i, st in enumerate(stages):
    base = st.split()[0]
    pkgs = []
    for m in re.finditer(r"apt-get install ([^&]*)", st):
        pkgs += [p for p in m.group(1).split() if not p.startswith("-")]
    user = re.findall(r"^USER (\S+)", st, flags=re.M)
    print(f"{i} {base} {user[-1] if user else '-'} {' '.join(pkgs)}")
PY
[ "$(wc -l <"$WORK/stages")" = 2 ] || fail "expected two stages: $(cat "$WORK/stages")"
while read -r i base user pkgs; do
    case $base in debian:12 | debian:12-slim | debian:bookworm*) ;; *) fail "stage $i: base $base" ;; esac
    for p in $pkgs; do
        [[ "$(apt-cache policy "$p")" =~ Candidate:\ [0-9] ]] || fail "stage $i: no Debian 12 package $p"
    done
done <"$WORK/stages"
read -r _ _ user final <<<"$(tail -1 "$WORK/stages")"
case $user in - | 0 | 0:* | root | root:*) fail "the final stage runs as root ($user)" ;; esac
for p in $final; do
    case $p in *-dev | build-essential | gcc* | cmake | *compiler*) fail "final stage installs $p" ;; esac
done

# The libraries the binary links, and the packages that hold them.
closure=$(apt-cache depends --recurse --no-recommends --no-suggests --no-conflicts --no-breaks \
    --no-replaces --no-enhances $final $(dpkg-query -W -f='${Package} ${Essential}\n' |
    awk '$2 == "yes" {print $1}') 2>/dev/null | grep -v '^ ' | sed 's/:amd64$//' | sort -u)
for lib in $(ldd "$STAMPEDE" | awk '/=>/ {print $3}'); do
    real=$(readlink -f "$lib")
    pkg=$(dpkg -S "$real" 2>/dev/null | head -1 | cut -d: -f1) ||
        pkg=$(dpkg -S "$lib" 2>/dev/null | head -1 | cut -d: -f1) || true
    [ -n "$pkg" ] || pkg=$(dpkg -S "$(basename "$lib")" 2>/dev/null | head -1 | cut -d: -f1)
    [ -n "$pkg" ] || fail "no package holds $lib"
    grep -qx "$pkg" <<<"$closure" || fail "$lib ($pkg) is not installed in the final stage"
done
echo "ok: $(wc -w <<<"$final") runtime packages cover $(ldd "$STAMPEDE" | grep -c '=>') libraries; user $user"
