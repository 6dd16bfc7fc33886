#!/bin/bash
# Malformed chunks: the mock sends the middle token of ~30 % of its streams as truncated JSON
# (--malformed-rate 0.3), 100 requests of 20 tokens through `stampede run --workers 2 --trace`.
# Asserted:
#  - no crash: exit 0, no worker lost or dead, nothing about a signal, an assertion or a
#    sanitizer in the run's or the workers' logs;
#  - errors.malformed_sse equals the malformed streams the mock counted
#    (stampede_mock_faults_injected_total{kind="malformed"}), between 10 and 50; every other class
#    0; ok + malformed_sse = 100;
#  - each malformed_sse error in the trace says "malformed chunk" and quotes the bad text;
#  - the ok requests are whole (20 tokens each) and alone in the latency tables.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 2 --malformed-rate 0.3 --seed 3
write_workload "$WORK/m.yaml" seed=3 ignore_eos=true output_tokens=20 concurrency=4 \
    max_requests=100
run_bounded 60 "$WORK/table" "$WORK/run.err" "$WORK/m.yaml" --workers 2 --target "$MOCK_URL" \
    --out "$WORK/out" --trace
assert_equal "exit status" "$RUN_RC" 0
grep -Eqi "lost|died|signal|assert|sanitizer|segmentation|core dumped" "$WORK/run.err" "$WORK/out/workers.log" &&
    fail "a process crashed or was lost: $(grep -Ehi "lost|died|signal|assert|sanitizer|segmentation|core dumped" "$WORK/run.err" "$WORK/out/workers.log")"
malformed=$(mock_metric stampede_mock_faults_injected_total 'kind="malformed"')

check_results "$WORK/out" "$malformed" <<'PY'
malformed = int(float(argv[0]))
assert 10 <= malformed <= 50, f"the mock broke {malformed} of 100 streams at a 30 % rate"
errors = level["errors"]
assert errors["malformed_sse"] == malformed, f"malformed_sse {errors['malformed_sse']}, the mock broke {malformed} streams"
others = {k: v for k, v in errors.items() if k != "malformed_sse" and v}
assert not others, f"other error classes: {others}"
assert level["requests_ok"] + errors["malformed_sse"] == 100 == len(rows), (level["requests_ok"], errors, len(rows))
assert not results["partial"], "results marked partial"
for row in rows:
    if row["error"] == "malformed_sse":
        msg = row["error_message"] or ""
        assert msg.startswith("malformed chunk after") and '{"id":' in msg, msg
ovr = level["output_vs_requested"]
assert ovr["requests_checked"] == level["requests_ok"] and ovr["mismatched_requests"] == 0, ovr
assert level["ttft_ms"]["count"] == level["requests_ok"], level["ttft_ms"]
print(f"{malformed} malformed streams -> {errors['malformed_sse']} malformed_sse errors, {level['requests_ok']} ok")
PY
echo "ok: malformed chunks counted as malformed_sse errors, no crash"
