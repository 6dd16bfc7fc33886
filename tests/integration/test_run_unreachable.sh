#!/bin/bash
# A target nobody listens on: every request fails as refused (ECONNREFUSED: nothing listens), results.json says so, and
# `stampede run` exits non-zero naming the reason and the endpoint (--no-preflight: the preflight
# would stop the run first, as test_preflight.sh shows).
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

# A port that was free a moment ago: bind, read, close.
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
write_workload "$WORK/u.yaml" endpoints="[http://127.0.0.1:$PORT]" concurrency=2 max_requests=10
run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/u.yaml" --workers 2 --out "$WORK/out" --no-preflight
assert_equal "exit status" "$RUN_RC" 1
grep -q "every request failed (10 of 10): first error: refused.*(http://127.0.0.1:$PORT)" \
    "$WORK/run.err" || fail "message: $(tail -3 "$WORK/run.err")"
assert_equal "requests_failed" "$(json_value "$WORK/out/results.json" 'l["requests_failed"]')" 10
assert_equal "refused" "$(json_value "$WORK/out/results.json" 'l["errors"]["refused"]')" 10
assert_equal "connect errors" "$(json_value "$WORK/out/results.json" 'l["errors"]["connect"]')" 0
echo "ok: unreachable target reported, exit 1"
