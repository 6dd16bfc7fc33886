#!/bin/bash
# Every --faults kind of `stampede mock` against `stampede run --workers 1 --trace`: one mock on a
# schedule that hits each kind (KIND@N; refused counts connections), 150 streamed requests,
# concurrency 3, target.timeout 3s (the stall lasts 10 min, so it ends in a timeout).
# Asserted: each kind was injected (stampede_mock_faults_total{kind} > 0) and the client counted
# exactly that many requests in the kind's class; slow-headers requests still succeed; the run
# exits 0 with no worker lost; the mock still answers /health afterwards. One allowance: libcurl
# resends a request once when a reused connection dies before any response byte, so a
# reset-headers on a reused connection is invisible to the client; the resends are counted from
# the mock (requests it received = responses + reset-headers; the client sent 150), and a
# connection refused at accept may be resent the same way, so the faults before any response
# byte are bounded rather than exact.
# ctest: parallel (class counts against the mock's own counters)
source "$(dirname "$0")/protocol_lib.sh"

SPEC='500@23,503@29,429@19,context-length@17,reset-headers@31,reset-mid@13,stall@71'
SPEC+=',malformed@11,truncated@37,no-done@7,slow-headers@43/200,event-error@5,not-sse@41,refused@9'
start_mock --ttft-ms 2 --itl-ms 1 --seed 3 --faults "$SPEC"
write_workload "$WORK/f.yaml" seed=5 ignore_eos=true timeout=3s concurrency=3 max_requests=150
run_bounded 120 "$WORK/table" "$WORK/run.err" "$WORK/f.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
grep -q "lost" "$WORK/run.err" && fail "a worker was lost: $(grep lost "$WORK/run.err")"
curl -sf --max-time 5 "$MOCK_URL/health" >/dev/null || fail "the mock does not answer /health"
curl -s --max-time 5 "$MOCK_URL/metrics" >"$WORK/metrics.prom"

check_results "$WORK/out" "$WORK/metrics.prom" <<'PY'
injected, responses = {}, 0
for line in open(argv[0]):
    if line.startswith("stampede_mock_faults_total{"):
        injected[re.search(r'kind="([^"]+)"', line).group(1)] = int(float(line.split()[-1]))
    elif line.startswith("stampede_mock_http_responses_total{"):
        responses += int(float(line.split()[-1]))
resent = responses + injected["reset-headers"] - 150
problems = [f"kind {k} was never injected" for k, v in injected.items() if v == 0]
errors = level["errors"]
want = {  # client class: the kinds that end in it
    "http_5xx": ["500", "503"], "http_429": ["429"], "context_length": ["context-length"],
    "timeout": ["stall"], "protocol": ["malformed"], "no_done": ["no-done"],
    "server_error_event": ["event-error"], "not_sse": ["not-sse"], "http_4xx": [],
}
for cls, kinds in want.items():
    n = sum(injected[k] for k in kinds)
    if errors[cls] != n:
        problems.append(f"class {cls}: the client counted {errors[cls]}, the mock injected {n} "
                        f"({', '.join(f'{k} {injected[k]}' for k in kinds)})")
# Resets after tokens (reset-mid, truncated) are incomplete with tokens, exactly.
late = sum(1 for r in rows if r["error"] == "incomplete" and r["chunks_us"])
if late != injected["reset-mid"] + injected["truncated"]:
    problems.append(f"{late} incomplete requests with tokens, the mock reset-mid "
                    f"{injected['reset-mid']} + truncated {injected['truncated']}")
# Resets before any byte (refused at accept, reset-headers) end in connect or incomplete without
# tokens, unless libcurl resent the request (see above): at most as many as injected.
early = errors["connect"] + errors["incomplete"] - late
if not injected["reset-headers"] - resent <= early <= injected["refused"] + injected["reset-headers"]:
    problems.append(f"{early} requests failed before any byte (connect {errors['connect']}), "
                    f"the mock refused {injected['refused']} connections and reset "
                    f"{injected['reset-headers']} before the headers, libcurl resent {resent}")
if len(rows) != 150 or level["requests_ok"] + level["requests_failed"] != 150:
    problems.append(f"{len(rows)} trace rows, ok {level['requests_ok']} + failed "
                    f"{level['requests_failed']}, expected 150")
failed = sum(errors.values())
if level["requests_failed"] != failed:
    problems.append(f"requests_failed {level['requests_failed']} != sum of classes {failed}")
if level["ttft_ms"]["count"] > level["requests_ok"]:
    problems.append(f"TTFT count {level['ttft_ms']['count']} > ok {level['requests_ok']}: "
                    "failed requests leak into the latencies")
if problems:
    sys.exit("\n".join(problems + [f"injected {injected}", f"errors {errors}"]))
print(f"ok: injected {injected}; errors {errors}; resent by libcurl {resent}")
PY
echo "ok: every fault kind ends in its class, counted exactly; the mock and the run survive"
