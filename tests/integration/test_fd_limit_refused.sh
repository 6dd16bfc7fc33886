#!/bin/bash
# A worker whose share cannot fit under its hard open-file limit (one socket a stream, plus 64 for
# itself) refuses the run before the start, and the run stops in seconds with the limit, the need
# and the fix named, instead of measuring a storm of failed connects as server errors.
# ctest: parallel (exit status, message and a bound of seconds)
source "$(dirname "$0")/protocol_lib.sh"
command -v prlimit >/dev/null || fail "prlimit (util-linux) is needed"

start_mock --seed 9
write_workload "$WORK/w.yaml" seed=9 endpoints="[$MOCK_URL]" concurrency=300 duration=5s
start=$(date +%s)
rc=0
prlimit --nofile=200:200 timeout 30 "$STAMPEDE" run "$WORK/w.yaml" --workers 1 --out "$WORK/out" \
    >"$WORK/table" 2>"$WORK/err" || rc=$?
took=$(($(date +%s) - start))
assert_equal "exit status" "$rc" 1
grep -q "this worker's share needs 300 streams, one socket each, plus 64 for itself: the open-file limit is 200 (hard limit 200), below the 364 descriptors needed: raise the hard limit" "$WORK/err" ||
    fail "the refusal does not name the limit and the need: $(tail -3 "$WORK/err")"
[ "$took" -le 10 ] || fail "the refusal took $took s"

# The same share under a limit that holds it runs.
rc=0
prlimit --nofile=400:400 timeout 60 "$STAMPEDE" run "$WORK/w.yaml" --workers 1 --out "$WORK/ok" \
    >"$WORK/table2" 2>"$WORK/err2" || rc=$?
assert_equal "exit status under a limit that fits" "$rc" 0
echo "ok: refused in $took s under 200 descriptors, ran under 400"
