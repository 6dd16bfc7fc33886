#!/bin/bash
# target.retry_on_429 against the mock's 429 fault (`--faults 429@4`: every 4th request the mock
# receives is answered 429 with `retry-after: 1`), 20 streamed requests, concurrency 2, --trace.
#  - honour: no request fails; every 429 the mock sent was waited out and resent (results.json
#    retries.retries_429 = the mock's count = the trace's retries summed); each wait lasted the
#    Retry-After's 1 s (>= 1000 ms, < 2500 ms on a loaded machine); a retried request's TTFT runs
#    from its last send (under 500 ms with a 2 ms TTFT mock) while ttft_from_intended includes the
#    wait (>= 1000 ms); the terminal table shows the retries.
#  - honour with retry_after_max 300ms: the waits are capped (>= 300 ms, < 1500 ms).
#  - ignore: each 429 is an http_429 error, nothing is resent.
#  - against reliability_server.py (not the mock), a Retry-After given as an HTTP-date is waited.
# A bad value is refused naming file:line:key.
# ctest: parallel (bounds 300 ms or more wide)
source "$(dirname "$0")/protocol_lib.sh"

workload() { # FILE MODE [EXTRA TARGET LINE]
    cat >"$1" <<YAML
seed: 4
target:
  ignore_eos: true
  retry_on_429: $2
${3:-}
workload: {kind: requests, input_tokens: 8, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 20}
YAML
}

check_run() { # OUT MODE MIN_WAIT_MS MAX_WAIT_MS
    local injected
    injected=$(mock_metric stampede_mock_faults_total 'kind="429"')
    check_results "$1" "$injected" "$2" "$3" "$4" <<'PY'
injected, mode, lo, hi = int(float(argv[0])), argv[1], float(argv[2]), float(argv[3])
retries = level["retries"]
assert injected >= 4, f"the mock sent only {injected} 429s"
assert len(rows) == 20, f"{len(rows)} trace rows"
if mode == "ignore":
    assert level["errors"]["http_429"] == injected, (level["errors"], injected)
    assert retries["retries_429"] == 0 and all(r["retries"] == 0 for r in rows), retries
    print(f"ignore: {injected} 429s -> {level['errors']['http_429']} http_429 errors")
    sys.exit(0)
assert level["requests_failed"] == 0, level["errors"]
assert level["requests_ok"] == 20, level["requests_ok"]
assert retries["retries_429"] == injected == sum(r["retries"] for r in rows), (retries, injected)
retried = [r for r in rows if r["retries"]]
assert retries["requests_retried"] == len(retried), (retries, len(retried))
for r in retried:
    per = r["retry_wait_ms"] / r["retries"]
    assert lo <= per < hi, f"a wait of {per:.0f} ms per retry, expected [{lo}, {hi})"
    assert r["ttft_ms"] < 500, f"TTFT {r['ttft_ms']} ms: not measured from the last send"
    assert r["ttft_from_intended_ms"] >= lo * r["retries"], r["ttft_from_intended_ms"]
assert abs(retries["retry_wait_s"] * 1000 - sum(r["retry_wait_ms"] for r in rows)) < 1, retries
print(f"{mode}: {injected} 429s, {len(retried)} requests retried, waits "
      f"{sorted(round(r['retry_wait_ms']) for r in retried)} ms")
PY
}

start_mock --ttft-ms 2 --itl-ms 1 --faults 429@4
workload "$WORK/honour.yaml" honour
run_bounded 120 "$WORK/t1" "$WORK/e1" "$WORK/honour.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/honour" --trace
assert_equal "exit status (honour)" "$RUN_RC" 0
grep -Eq "^retries +[0-9]+ after HTTP 429 \([0-9]+ requests, [0-9.]+ s waited\)" "$WORK/t1" ||
    fail "the table does not show the retries: $(head -8 "$WORK/t1")"
check_run "$WORK/honour" honour 1000 2500

start_mock --ttft-ms 2 --itl-ms 1 --faults 429@4
workload "$WORK/cap.yaml" honour "  retry_after_max: 300ms"
run_bounded 120 "$WORK/t2" "$WORK/e2" "$WORK/cap.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/cap" --trace
assert_equal "exit status (capped)" "$RUN_RC" 0
check_run "$WORK/cap" capped 300 1500

start_mock --ttft-ms 2 --itl-ms 1 --faults 429@4
workload "$WORK/ignore.yaml" ignore
run_bounded 120 "$WORK/t3" "$WORK/e3" "$WORK/ignore.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/ignore" --trace
assert_equal "exit status (ignore)" "$RUN_RC" 0
check_run "$WORK/ignore" ignore 0 0

# 429s and reset-headers together: a connection closed before any response byte on a reused
# connection is resent once by libcurl, also during an attempt that then got a 429 and was
# retried; every such resend is kept in the request's record across its attempts, so
# reset_before_headers + connection_resends = the mock's reset-headers, exactly (docs/mock.md).
start_mock --ttft-ms 2 --itl-ms 1 --faults 429@3,reset-headers@4
workload "$WORK/both.yaml" honour "  retry_after_max: 50ms"
sed -i 's/max_requests: 20/max_requests: 60/' "$WORK/both.yaml"
run_bounded 120 "$WORK/t4" "$WORK/e4" "$WORK/both.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/both" --trace
assert_equal "exit status (429s and resets)" "$RUN_RC" 0
injected=$(mock_metric stampede_mock_faults_total 'kind="reset-headers"')
check_results "$WORK/both" "$injected" <<'PY'
injected = int(float(argv[0]))
resends = level["retries"]["connection_resends"]
failed = level["errors"]["reset_before_headers"]
assert resends == sum(r["resends"] for r in rows), (resends, sum(r["resends"] for r in rows))
assert any(r["resends"] and r["retries"] for r in rows), "no request both resent and retried"
assert failed + resends == injected, f"{failed} reset_before_headers + {resends} resends != {injected} injected"
print(f"429s and resets: {injected} reset-headers = {failed} failed + {resends} resent")
PY

# Against a server that is not the mock: reliability_server.py answers every other request 429
# with Retry-After as an HTTP-date 2 s ahead (1 to 2 s once both sides round to whole seconds).
start_test_server reliability_server.py scripted --plan ratelimited,ok
cat >"$WORK/date.yaml" <<YAML
seed: 4
target: {model: rel, retry_on_429: honour}
workload: {kind: requests, input_tokens: 8, output_tokens: 4}
scheduler: {kind: concurrent, concurrency: 1}
limits: {max_requests: 3}
YAML
run_bounded 60 "$WORK/t5" "$WORK/e5" "$WORK/date.yaml" --workers 1 --target "$URL" \
    --out "$WORK/date" --trace
assert_equal "exit status (HTTP-date)" "$RUN_RC" 0
curl -s --max-time 5 "$URL/counts" >"$WORK/counts.json"
check_results "$WORK/date" "$WORK/counts.json" <<'PY'
counts = json.load(open(argv[0]))
assert counts["ratelimited"] == 3 and counts["ok"] == 3, counts
assert level["requests_ok"] == 3 and level["requests_failed"] == 0, level["errors"]
assert [r["retries"] for r in rows] == [1, 1, 1], [r["retries"] for r in rows]
waits = [r["retry_wait_ms"] for r in rows]
assert all(900 <= w < 2600 for w in waits), f"waits {waits} ms for an HTTP-date 2 s ahead"
print(f"HTTP-date Retry-After: waits {[round(w) for w in waits]} ms")
PY

workload "$WORK/bad.yaml" sometimes
run_bounded 30 /dev/null "$WORK/e4" "$WORK/bad.yaml" --workers 1 --target "$MOCK_URL" --out "$WORK/bad"
[ "$RUN_RC" -ne 0 ] || fail "retry_on_429: sometimes was accepted"
grep -q "bad.yaml:4.*target.retry_on_429" "$WORK/e4" || fail "message: $(cat "$WORK/e4")"
echo "ok: 429s honoured (Retry-After waited, capped, TTFT from the last send) or counted as errors"
