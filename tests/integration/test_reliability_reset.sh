#!/bin/bash
# A server that hangs up mid-stream: the mock resets the connection (TCP RST) after 5 streamed
# tokens in ~30 % of the requests (--reset-after-tokens 5 --reset-rate 0.3), 100 requests of 20
# tokens through `stampede run --workers 2 --trace`. Asserted:
#  - exit 0 (not every request failed), results not partial;
#  - errors.reset_mid_stream equals the resets the mock counted (stampede_mock_faults_injected_total
#    {kind="reset"}), between 10 and 50; every other class 0; ok + reset_mid_stream = 100;
#  - each reset_mid_stream request in the trace got exactly 5 chunks and says the connection was lost;
#  - the ok requests are whole: each received its 20 tokens (output_vs_requested), and only they
#    feed the latency tables (TTFT count = ok);
#  - the mock has nothing running afterwards and aborted exactly the reset requests.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2 --reset-after-tokens 5 --reset-rate 0.3 --seed 3
write_workload "$WORK/r.yaml" seed=3 ignore_eos=true output_tokens=20 concurrency=4 \
    max_requests=100
run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/r.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
resets=$(mock_metric stampede_mock_faults_injected_total 'kind="reset"')
aborted=$(mock_metric vllm:request_success_total 'finished_reason="abort"')
assert_equal "requests running on the mock after the run" "$(mock_metric vllm:num_requests_running)" 0

check_results "$WORK/out" "$resets" "$aborted" <<'PY'
resets, aborted = int(float(argv[0])), int(float(argv[1]))
assert 10 <= resets <= 50, f"the mock reset {resets} of 100 requests at a 30 % rate"
errors = level["errors"]
assert errors["reset_mid_stream"] == resets, f"reset_mid_stream {errors['reset_mid_stream']}, the mock reset {resets}"
others = {k: v for k, v in errors.items() if k != "reset_mid_stream" and v}
assert not others, f"other error classes: {others}"
assert level["requests_ok"] + errors["reset_mid_stream"] == 100 == len(rows), \
    f"ok {level['requests_ok']} + reset_mid_stream {errors['reset_mid_stream']}, {len(rows)} trace lines; expected 100"
assert level["requests_failed"] == resets and level["requests_cancelled"] == 0, level
assert not results["partial"], "results marked partial"
for row in rows:
    if row["error"] == "reset_mid_stream":
        # tokens, not chunks: tokens read in one wake-up of a loaded loop are one chunk
        n = len(row["chunks_us"])
        tokens = sum(row.get("chunk_tokens") or [1] * n)
        assert tokens == 5, f"a reset_mid_stream request got {tokens} tokens, expected 5"
        assert f"connection lost after {n} chunks" in row["error_message"], row["error_message"]
ovr = level["output_vs_requested"]
assert ovr["requests_checked"] == level["requests_ok"] and ovr["mismatched_requests"] == 0, ovr
assert level["ttft_ms"]["count"] == level["requests_ok"], level["ttft_ms"]
assert aborted == resets, f"the mock aborted {aborted} requests, reset {resets}"
print(f"{resets} resets -> {errors['reset_mid_stream']} reset_mid_stream, {level['requests_ok']} ok")
PY
echo "ok: connection resets mid-stream counted as reset_mid_stream, one for one"
