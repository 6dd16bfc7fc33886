#!/bin/bash
# The live metrics port beyond loopback: without --metrics-token-file or --metrics-insecure it is
# refused before any worker starts, naming both; with a token file every request must carry
# "Authorization: Bearer TOKEN" (none, or a wrong one: 401, the scrape itself: 200);
# --metrics-insecure serves without a token and says so on stderr. A missing or empty token file
# is refused naming the file.
# ctest: parallel (statuses and messages only)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --seed 5
write_workload "$WORK/a.yaml" seed=5 endpoints="[$MOCK_URL]" input_tokens=16 output_tokens=16 \
    concurrency=2 duration=3s

refused() { # refused WHAT PATTERN ARGS...: the run exits 1 at once, stderr matching PATTERN
    local what=$1 pattern=$2 rc=0
    shift 2
    timeout 20 "$STAMPEDE" run "$WORK/a.yaml" --workers 1 --out "$WORK/never" "$@" \
        2>"$WORK/refused.err" || rc=$?
    [ "$rc" = 1 ] && grep -qE -- "$pattern" "$WORK/refused.err" ||
        fail "$what: exit $rc, $(cat "$WORK/refused.err")"
    [ ! -e "$WORK/never/results.json" ] || fail "$what: a run happened"
}
refused "0.0.0.0 without a token" \
    "0.0.0.0:0 is reachable from other machines.*--metrics-token-file FILE.*--metrics-insecure" \
    --metrics-listen 0.0.0.0:0
refused "a missing token file" "--metrics-token-file $WORK/absent: No such file" \
    --metrics-listen 0.0.0.0:0 --metrics-token-file "$WORK/absent"
: >"$WORK/empty"
refused "an empty token file" "--metrics-token-file $WORK/empty: the first line is empty" \
    --metrics-listen 0.0.0.0:0 --metrics-token-file "$WORK/empty"

status() { # status PORT [HEADER]: the HTTP status of GET /metrics
    curl -s -o /dev/null -w '%{http_code}' --max-time 5 ${2:+-H "$2"} "http://127.0.0.1:$1/metrics"
}
start_run() { # start_run NAME ARGS...: a run in the background; sets PORT from its stderr
    local name=$1
    shift
    timeout 60 "$STAMPEDE" run "$WORK/a.yaml" --workers 1 --out "$WORK/$name" \
        --metrics-listen 0.0.0.0:0 "$@" >"$WORK/$name.table" 2>"$WORK/$name.err" &
    RUN_PID=$!
    BACKGROUND+=($RUN_PID)
    local addr
    addr=$(wait_for_line "$WORK/$name.err" 20 'metrics on http://[0-9.]+:[0-9]+/metrics') ||
        fail "$name: no metrics address: $(tail -5 "$WORK/$name.err")"
    PORT=$(echo "$addr" | sed -E 's#.*:([0-9]+)/metrics#\1#')
}

printf '  s3cret-token-%s  \n' "$$" >"$WORK/token.txt"
start_run withtoken --metrics-token-file "$WORK/token.txt"
grep -q "(bearer token required)" "$WORK/withtoken.err" || fail "the token is not announced"
assert_equal "no token" "$(status "$PORT")" 401
assert_equal "a wrong token" "$(status "$PORT" "Authorization: Bearer s3cret-token-0")" 401
assert_equal "a token as Basic" "$(status "$PORT" "Authorization: Basic s3cret-token-$$")" 401
assert_equal "the token" "$(status "$PORT" "authorization: bearer s3cret-token-$$")" 200
curl -sf --max-time 5 -H "Authorization: Bearer s3cret-token-$$" "http://127.0.0.1:$PORT/metrics" |
    grep -q '^stampede_' || fail "the scrape with the token holds no stampede_ series"
wait "$RUN_PID" || fail "the run with a token failed: $(tail -5 "$WORK/withtoken.err")"

start_run open --metrics-insecure
grep -q "warning: --metrics-insecure: any host that reaches 0.0.0.0:0" "$WORK/open.err" ||
    fail "no warning for --metrics-insecure: $(cat "$WORK/open.err")"
assert_equal "insecure, no token" "$(status "$PORT")" 200
wait "$RUN_PID" || fail "the insecure run failed: $(tail -5 "$WORK/open.err")"
echo "ok: refused without a token, 401 without the right one, 200 with it and when insecure"
