#!/usr/bin/env bash
# make realworld: runs every capture in $REALWORLD (default ../shared/realworld: real /metrics pages,
# SSE bodies, traces and workload files from the servers and tools stampede's users run) through
# stampede and prints one table: input, recognised, figures, verdict. Opt-in, never in make test:
# the captures belong to their authors and are not in this repository.
# Each tests/realworld/check_*.sh reads one kind of capture and prints rows through row() below;
# it exits non-zero when a verdict is FAIL. A row's verdict is ok, FAIL or note (a quirk we know
# and handle, said in the figures column).
set -u
here=$(cd "$(dirname "$0")" && pwd)
REALWORLD=${REALWORLD:-$here/../../../shared/realworld}
STAMPEDE=${STAMPEDE:-$here/../../build/stampede}
if [ ! -d "$REALWORLD" ]; then
    echo "make realworld: $REALWORLD is absent; nothing to check (the captures are kept outside the project)"
    exit 0
fi
REALWORLD=$(cd "$REALWORLD" && pwd)
STAMPEDE=$(cd "$(dirname "$STAMPEDE")" && pwd)/$(basename "$STAMPEDE")
[ -x "$STAMPEDE" ] || { echo "make realworld: $STAMPEDE is not built (make build)" >&2; exit 1; }
export REALWORLD STAMPEDE
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
export RW_SCRATCH=$scratch

printf '%-58s %-12s %-60s %s\n' input recognised figures verdict
failed=0
for check in "$here"/check_*.sh; do
    [ -f "$check" ] || continue
    out=$scratch/$(basename "$check").out
    bash "$check" >"$out" 2>"$out.err"
    rc=$?
    cat "$out"
    if [ $rc -ne 0 ]; then
        failed=1
        echo "  $(basename "$check") exited $rc:" && sed 's/^/    /' "$out.err" | head -n 20
    fi
done
[ $failed -eq 0 ] && echo "make realworld: every check passed" || echo "make realworld: FAILED"
exit $failed
