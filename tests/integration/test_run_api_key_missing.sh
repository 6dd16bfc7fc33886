#!/bin/bash
# The API key is read by each worker from its own environment (it never travels): when the
# variable the file names is unset, the workers refuse the assignment, the run does not start,
# and the message names the variable; the exit status is 1 and the workers exit.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

write_workload "$WORK/k.yaml" endpoints="[http://127.0.0.1:9]" api_key_env=STAMPEDE_TEST_UNSET_KEY \
    concurrency=2 max_requests=4
rc=0
env -u STAMPEDE_TEST_UNSET_KEY timeout 60 "$STAMPEDE" run "$WORK/k.yaml" --workers 2 \
    --out "$WORK/out" >/dev/null 2>"$WORK/run.err" || rc=$?
assert_equal "exit status" "$rc" 1
grep -q "cannot run: worker local-[01] could not prepare the run: .*target.api_key_env: environment variable STAMPEDE_TEST_UNSET_KEY is not set" \
    "$WORK/run.err" || fail "message: $(tail -3 "$WORK/run.err")"
[ "$(grep -c "run abandoned; exiting (--once)" "$WORK/out/workers.log")" = 2 ] ||
    fail "workers did not drop the run: $(cat "$WORK/out/workers.log")"
echo "ok: missing API key variable refused before the start"
