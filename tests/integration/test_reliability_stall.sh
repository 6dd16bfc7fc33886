#!/bin/bash
# A server that stalls: the mock goes quiet for 4 s after 3 tokens in ~30 % of the requests
# (--stall-ms 4000 --stall-after-tokens 3 --stall-rate 0.3), while the workload file sets
# target.timeout: 1s. 30 requests of 10 tokens through `stampede run --workers 2 --trace`.
# Asserted:
#  - exit 0 (not every request failed), within 30 s;
#  - errors.timeout equals the stalls the mock counted (stampede_mock_faults_injected_total
#    {kind="stall"}), at least 3; every other class 0; ok + timeout = 30;
#  - each timed-out request got its 3 chunks and ended at the configured timeout, not at the
#    stall's end: end - send within [1000, 1500] ms (500 ms of slack for a busy machine; the
#    stall would end at 4000 ms);
#  - the ok requests are whole (10 tokens each) and alone in the latency tables;
#  - the mock has nothing running afterwards: the timed-out requests were closed by the client
#    (the mock counts them aborted).
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5 --stall-ms 4000 --stall-after-tokens 3 --stall-rate 0.3 --seed 3
write_workload "$WORK/s.yaml" seed=3 ignore_eos=true timeout=1s output_tokens=10 concurrency=4 \
    max_requests=30
run_bounded 30 "$WORK/table" "$WORK/run.err" "$WORK/s.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
stalls=$(mock_metric stampede_mock_faults_injected_total 'kind="stall"')
sleep 0.2
assert_equal "requests running on the mock after the run" "$(mock_metric vllm:num_requests_running)" 0
aborted=$(mock_metric vllm:request_success_total 'finished_reason="abort"')

check_results "$WORK/out" "$stalls" "$aborted" <<'PY'
stalls, aborted = int(float(argv[0])), int(float(argv[1]))
assert stalls >= 3, f"the mock stalled only {stalls} of 30 requests at a 30 % rate"
errors = level["errors"]
assert errors["timeout"] == stalls, f"timeout {errors['timeout']}, the mock stalled {stalls}"
others = {k: v for k, v in errors.items() if k != "timeout" and v}
assert not others, f"other error classes: {others}"
assert level["requests_ok"] + errors["timeout"] == 30 == len(rows), (level["requests_ok"], errors, len(rows))
def tokens(row):  # tokens read in one wake-up of a loaded loop are one chunk
    return sum(row.get("chunk_tokens") or [1] * len(row["chunks_us"]))
for row in rows:
    if row["error"] != "timeout":
        assert row["error"] == "none" and tokens(row) == 10, row
        continue
    took = (row["end_us"] - row["send_us"]) / 1000
    assert 1000 <= took <= 1500, f"a timed-out request ended after {took:.0f} ms, expected the 1000 ms timeout"
    assert tokens(row) == 3, f"a timed-out request got {tokens(row)} tokens, expected 3"
    assert "timed out" in row["error_message"], row["error_message"]
assert level["ttft_ms"]["count"] == level["requests_ok"], level["ttft_ms"]
assert aborted == stalls, f"the mock aborted {aborted} requests, {stalls} stalled"
took = sorted((r["end_us"] - r["send_us"]) / 1000 for r in rows if r["error"] == "timeout")
print(f"{stalls} stalls -> {errors['timeout']} timeouts after {took[0]:.0f}-{took[-1]:.0f} ms")
PY
echo "ok: stalled streams counted as timeout at the configured 1 s"
