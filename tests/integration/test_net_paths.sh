#!/bin/bash
# Endpoints as users paste them: a whole request URL (--target .../v1/chat/completions) is the
# path itself, never doubled; target.path and a query on the whole URL reach the server as given
# (Azure-style deployments, ?api-version=); a whole URL of the other API is refused naming the fix.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

start_test_server net_server.py origin server --log "$WORK/origin.log"

workload() { # file, target lines
    printf 'target:\n%s\nworkload:\n  kind: requests\n  input_tokens: 8\n' "$2" >"$1"
    printf '  output_tokens: 3\nscheduler:\n  kind: concurrent\n  concurrency: 2\n' >>"$1"
    printf 'limits:\n  max_requests: 2\n' >>"$1"
}
served() { # the requests the server saw with request target $1
    grep -cxF "POST $1" "$WORK/origin.log" || true
}

workload "$WORK/plain.yaml" "  endpoints: [http://127.0.0.1:9]"
timeout 60 "$STAMPEDE" run "$WORK/plain.yaml" --target "$URL/v1/chat/completions" --workers 1 \
    --out "$WORK/whole" >/dev/null 2>"$WORK/whole.err" ||
    fail "--target with the whole path failed: $(tail -3 "$WORK/whole.err")"
assert_equal "requests to /v1/chat/completions" "$(served /v1/chat/completions)" 2

deployment="/openai/deployments/d1/chat/completions?api-version=2024-06-01"
workload "$WORK/path.yaml" "  endpoints: [$URL]
  path: $deployment"
timeout 60 "$STAMPEDE" run "$WORK/path.yaml" --workers 1 --out "$WORK/path" >/dev/null \
    2>"$WORK/path.err" || fail "target.path failed: $(tail -3 "$WORK/path.err")"
assert_equal "requests to target.path" "$(served "$deployment")" 2

workload "$WORK/query.yaml" "  endpoints: [\"$URL/v1/chat/completions?api-version=1\"]"
timeout 60 "$STAMPEDE" run "$WORK/query.yaml" --workers 1 --out "$WORK/query" >/dev/null \
    2>"$WORK/query.err" || fail "a whole URL with a query failed: $(tail -3 "$WORK/query.err")"
assert_equal "requests with the query" "$(served "/v1/chat/completions?api-version=1")" 2
# Besides the requests, only server_metrics: auto's scrapes and the preflight's questions of what
# the server is, each at the host's own root (never under a whole URL's or target.path's path).
assert_equal "requests anywhere else" "$(grep -v "/chat/completions" "$WORK/origin.log" |
    grep -vcxE "GET /metrics|preflight GET /(v1/models|version)" || true)" 0

rc=0
timeout 60 "$STAMPEDE" run "$WORK/plain.yaml" --target "$URL/v1/completions" --workers 1 \
    --out "$WORK/wrong" >/dev/null 2>"$WORK/wrong.err" || rc=$?
[ "$rc" != 0 ] || fail "a /v1/completions URL with api chat was accepted"
grep -q -- "--target $URL/v1/completions: .* is a /completions URL but target.api is chat; set target.api: completions" \
    "$WORK/wrong.err" || fail "message: $(cat "$WORK/wrong.err")"
echo "ok: whole URLs, target.path and queries reach the server as given"
