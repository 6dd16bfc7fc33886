#!/bin/bash
# The proxy environment is ignored unless target.proxy asks for it: with http_proxy, all_proxy
# and the rest pointing at a closed port a run is unaffected; with target.proxy set to a forward
# proxy of the test's own (or to env, the variables then naming it) the proxy sees every request,
# and the table and results.json say a proxy was used.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

CLOSED=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
start_test_server net_server.py origin server --log "$WORK/origin.log"
ORIGIN=$URL
start_test_server net_server.py proxy proxy --log "$WORK/proxy.log"
PROXY=$URL

workload() { # file, target lines
    printf 'target:\n  endpoints: [%s]\n%s\nworkload:\n  kind: requests\n' "$ORIGIN" "$2" >"$1"
    printf '  input_tokens: 8\n  output_tokens: 3\nscheduler:\n  kind: concurrent\n' >>"$1"
    printf '  concurrency: 2\nlimits:\n  max_requests: 4\n' >>"$1"
}
dead_proxies=(http_proxy="http://127.0.0.1:$CLOSED" HTTP_PROXY="http://127.0.0.1:$CLOSED"
    https_proxy="http://127.0.0.1:$CLOSED" all_proxy="http://127.0.0.1:$CLOSED"
    ALL_PROXY="http://127.0.0.1:$CLOSED")

workload "$WORK/direct.yaml" ""
env "${dead_proxies[@]}" timeout 60 "$STAMPEDE" run "$WORK/direct.yaml" --workers 1 \
    --out "$WORK/direct" >"$WORK/direct.out" 2>"$WORK/direct.err" ||
    fail "a dead proxy in the environment broke the run: $(tail -3 "$WORK/direct.err")"
assert_equal "requests ok past the proxy environment" \
    "$(json_value "$WORK/direct/results.json" 'l["requests_ok"]')" 4
assert_equal "proxy in results.json" \
    "$(json_value "$WORK/direct/results.json" 'r["run"]["network"]["proxy"]')" none
! grep -q "^proxy:" "$WORK/direct.out" || fail "a direct run names a proxy"

workload "$WORK/proxied.yaml" "  proxy: $PROXY"
env "${dead_proxies[@]}" timeout 60 "$STAMPEDE" run "$WORK/proxied.yaml" --workers 1 \
    --out "$WORK/proxied" >"$WORK/proxied.out" 2>"$WORK/proxied.err" ||
    fail "the run through target.proxy failed: $(tail -3 "$WORK/proxied.err")"
assert_equal "requests the proxy relayed" \
    "$(grep -c "^POST $ORIGIN/v1/chat/completions\$" "$WORK/proxy.log")" 4
grep -q "^proxy: $PROXY (target.proxy)" "$WORK/proxied.out" ||
    fail "the table does not name the proxy: $(cat "$WORK/proxied.out")"
assert_equal "proxy in results.json" \
    "$(json_value "$WORK/proxied/results.json" 'r["run"]["network"]["proxy"]')" "$PROXY"

workload "$WORK/env.yaml" "  proxy: env"
http_proxy=$PROXY timeout 60 "$STAMPEDE" run "$WORK/env.yaml" --workers 1 --out "$WORK/env" \
    >"$WORK/env.out" 2>"$WORK/env.err" || fail "proxy: env failed: $(tail -3 "$WORK/env.err")"
assert_equal "requests the proxy relayed, both runs" \
    "$(grep -c "^POST $ORIGIN/v1/chat/completions\$" "$WORK/proxy.log")" 8
assert_equal "origin requests, all runs" "$(grep -c "^POST /v1/chat/completions\$" "$WORK/origin.log")" 12
echo "ok: proxy environment ignored by default; target.proxy URL and env go through the proxy"
