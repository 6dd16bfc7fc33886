#!/bin/bash
# Every --faults kind of `stampede mock` against `stampede run --workers 1 --trace`: one mock on a
# schedule that hits each kind (KIND@N; refused counts connections), 150 streamed requests,
# concurrency 3, target.timeout 3s (the stall lasts 10 min, so it ends in a timeout).
# Asserted, exactly, for each kind: the client counted, in the kind's own class (docs/mock.md's
# table), exactly what the mock says it injected (stampede_mock_faults_total{kind}); every other
# class is 0; slow-headers requests succeed. The one resend libcurl makes on its own (a reused
# connection that closed before any response byte is resent on a fresh one) is counted by the
# client (results.json retries.connection_resends, the trace's "resends"), so reset_before_headers
# + connection_resends = the mock's reset-headers, exactly. Failed requests stay out of the
# latency statistics (TTFT's count = requests_ok, no latency count above it).
# The run exits 0 with no worker lost; the mock still answers /health afterwards.
# ctest: parallel (class counts against the mock's own counters)
source "$(dirname "$0")/protocol_lib.sh"

SPEC='500@23,503@29,429@19,context-length@17,reset-headers@31,reset-mid@13,stall@71'
SPEC+=',malformed@11,truncated@37,no-done@7,slow-headers@43/200,event-error@5,not-sse@41,refused@9'
start_mock --ttft-ms 2 --itl-ms 1 --seed 3 --faults "$SPEC"
# server_metrics: none: the controller's scrapes of /metrics are connections too, and would move
# the mock's connection-counted schedule (refused@9) off the client's requests.
write_workload "$WORK/f.yaml" seed=5 ignore_eos=true timeout=3s concurrency=3 max_requests=150 \
    server_metrics=none
# --no-preflight: refused@9 counts connections, and this test's curls after the run must land
# where they always did; the preflight's own connection would shift them by one.
run_bounded 120 "$WORK/table" "$WORK/run.err" "$WORK/f.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/out" --trace --no-preflight
assert_equal "exit status" "$RUN_RC" 0
grep -q "lost" "$WORK/run.err" && fail "a worker was lost: $(grep lost "$WORK/run.err")"
curl -sf --max-time 5 "$MOCK_URL/health" >/dev/null || fail "the mock does not answer /health"
curl -s --max-time 5 "$MOCK_URL/metrics" >"$WORK/metrics.prom"

check_results "$WORK/out" "$WORK/metrics.prom" <<'PY'
injected = {}
for line in open(argv[0]):
    if line.startswith("stampede_mock_faults_total{"):
        injected[re.search(r'kind="([^"]+)"', line).group(1)] = int(float(line.split()[-1]))
problems = [f"kind {k} was never injected" for k, v in injected.items() if v == 0]
errors = level["errors"]
resends = level["retries"]["connection_resends"]
if resends != sum(r["resends"] for r in rows):
    problems.append(f"results.json says {resends} resends, the trace {sum(r['resends'] for r in rows)}")
own = {  # class -> the kind that ends in it
    "http_500": "500", "http_503": "503", "http_429": "429", "context_length": "context-length",
    "refused": "refused", "reset_before_headers": "reset-headers", "reset_mid_stream": "reset-mid",
    "timeout": "stall", "malformed_sse": "malformed", "truncated_json": "truncated",
    "no_done": "no-done", "server_error_event": "event-error", "not_sse": "not-sse",
}
for cls, kind in own.items():
    got = errors[cls] + (resends if cls == "reset_before_headers" else 0)
    if got != injected[kind]:
        problems.append(f"class {cls}: the client counted {errors[cls]}"
                        f"{f' + {resends} resends' if cls == 'reset_before_headers' else ''}, "
                        f"the mock injected {injected[kind]} {kind}")
for cls, n in errors.items():
    if cls not in own and n:
        problems.append(f"class {cls}: {n} requests, no fault ends there: " +
                        "; ".join(r["error_message"] for r in rows if r["error"] == cls)[:300])
by_class = collections.Counter(r["error"] for r in rows)
for cls, n in errors.items():
    if by_class.get(cls, 0) != n:
        problems.append(f"class {cls}: {by_class.get(cls, 0)} trace rows, results.json {n}")
slow = [r for r in rows if r["headers_us"] is not None and r["send_us"] is not None
        and r["headers_us"] - r["send_us"] >= 190e3 and r["error"] == "none"]
if len(slow) < injected["slow-headers"]:
    problems.append(f"{len(slow)} ok requests waited >= 190 ms for their headers, "
                    f"the mock slowed {injected['slow-headers']}")
if len(rows) != 150 or level["requests_ok"] + level["requests_failed"] != 150:
    problems.append(f"{len(rows)} trace rows, ok {level['requests_ok']} + failed "
                    f"{level['requests_failed']}, expected 150")
if level["requests_failed"] != sum(errors.values()):
    problems.append(f"requests_failed {level['requests_failed']} != sum of classes")
for key in ("ttft_ms", "e2e_ms", "tpot_ms"):
    if level[key]["count"] > level["requests_ok"]:
        problems.append(f"{key} count {level[key]['count']} > ok {level['requests_ok']}: "
                        "failed requests leak into the latencies")
if level["ttft_ms"]["count"] != level["requests_ok"]:
    problems.append(f"TTFT count {level['ttft_ms']['count']} != ok {level['requests_ok']}")
if problems:
    sys.exit("\n".join(problems + [f"injected {injected}", f"errors {errors}",
                                   f"resends {resends}"]))
print(f"ok: injected {injected}; errors {errors}; resent by libcurl {resends}")
PY
echo "ok: every fault kind ends in its own class, counted exactly; the mock and the run survive"
