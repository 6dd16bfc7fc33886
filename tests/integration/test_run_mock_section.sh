#!/bin/bash
# The workload file's mock: section reaches the embedded mock. tp1-fp8 serves max_model_len 4096
# (the default engine 32768), so 5000-token prompts all get HTTP 400 with `profile: tp1-fp8`
# alone; with max_model_len: 256 on top, exactly the requests whose prompt plus max_tokens pass
# 256 get 400 and the others succeed. config.yaml carries the section back. With --target the
# section is ignored with a note, and a profile the mock does not know stops the run naming the
# file. The mock here (started by the test) is only the --target one.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/profile.yaml" <<YAML
seed: 2
target: {ignore_eos: true}
workload: {input_tokens: 5000, output_tokens: 4}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 6}
mock:
  profile: tp1-fp8
YAML
run_bounded 120 /dev/null "$WORK/profile.err" "$WORK/profile.yaml" --workers 1 --out "$WORK/profile"
# every request failed: exit 1 by design
[ "$RUN_RC" = 1 ] || fail "profile run exited $RUN_RC, expected 1: $(tail -5 "$WORK/profile.err")"
assert_equal "400s with tp1-fp8 (max_model_len 4096) and 5000-token prompts" \
    "$(json_value "$WORK/profile/results.json" 'l["errors"]["context_length"]')" 6
grep -q "maximum context length is 4096 tokens" "$WORK/profile.err" ||
    fail "the 400 does not name the profile's 4096: $(tail -3 "$WORK/profile.err")"

cat >"$WORK/len.yaml" <<YAML
seed: 4
target: {ignore_eos: true}
workload:
  input_tokens: {dist: uniform, min: 20, max: 500}
  output_tokens: 8
scheduler: {kind: concurrent, concurrency: 4}
limits: {max_requests: 40}
mock: {profile: tp1-fp8, max_model_len: 256, prefix_cache: false}
YAML
run_bounded 120 /dev/null "$WORK/len.err" "$WORK/len.yaml" --workers 2 --trace --allow-invalid \
    --out "$WORK/len"
[ "$RUN_RC" = 0 ] || fail "max_model_len run exited $RUN_RC: $(tail -5 "$WORK/len.err")"
check_results "$WORK/len" <<'PY' || fail "the 400s do not follow max_model_len 256"
assert len(rows) == 40, len(rows)
long = [r for r in rows if r["requested_input_tokens"] + 8 > 256]
short = [r for r in rows if r["requested_input_tokens"] + 8 <= 256]
assert len(long) >= 5 and len(short) >= 5, (len(long), len(short))
assert all(r["status"] == 400 for r in long), [(r["requested_input_tokens"], r["status"]) for r in long]
assert all(r["status"] == 200 for r in short), [(r["requested_input_tokens"], r["status"]) for r in short]
assert level["errors"]["context_length"] == len(long), (level["errors"], len(long))
PY
grep -q '^mock:$' "$WORK/len/config.yaml" &&
    grep -q '^  max_model_len: 256$' "$WORK/len/config.yaml" &&
    grep -q '^  prefix_cache: false$' "$WORK/len/config.yaml" ||
    fail "config.yaml lacks the mock section: $(cat "$WORK/len/config.yaml")"

# Two files: one mock serves both with the first file's section; the second's gets a note.
cat >"$WORK/small.yaml" <<YAML
target: {ignore_eos: true}
workload: {input_tokens: 300, output_tokens: 4}
limits: {max_requests: 2}
mock: {max_model_len: 512}
YAML
sed 's/max_model_len: 512/max_model_len: 100/' "$WORK/small.yaml" >"$WORK/small2.yaml"
run_bounded 120 /dev/null "$WORK/two.err" "$WORK/small.yaml" "$WORK/small2.yaml" --workers 1 \
    --out "$WORK/two"
[ "$RUN_RC" = 0 ] || fail "two-file run exited $RUN_RC: $(tail -5 "$WORK/two.err")"
grep -q "note: $WORK/small2.yaml: its mock section is ignored: the embedded mock serves every file with the options of the first, $WORK/small.yaml" \
    "$WORK/two.err" || fail "no note on the second file's section: $(cat "$WORK/two.err")"
grep -q "note: $WORK/small.yaml" "$WORK/two.err" && fail "the first file's section was noted"

# A real target: the section is ignored, with a note, and the requests reach that target.
start_mock --ttft-ms 1 --itl-ms 1
run_bounded 120 /dev/null "$WORK/target.err" "$WORK/len.yaml" --workers 1 --target "$MOCK_URL" \
    --out "$WORK/target"
[ "$RUN_RC" = 0 ] || fail "run with --target exited $RUN_RC: $(tail -5 "$WORK/target.err")"
grep -q "note: $WORK/len.yaml: its mock section is ignored: the run has a target" \
    "$WORK/target.err" || fail "no note on the ignored section: $(cat "$WORK/target.err")"
assert_equal "400s against the --target mock" \
    "$(json_value "$WORK/target/results.json" 'l["errors"]["http_4xx"]')" 0
assert_equal "requests at the --target mock" "$(mock_metric vllm:request_success_total)" 40

# A profile only the mock can judge: the run stops before any request, naming file and section.
sed 's/profile: tp1-fp8/profile: tp9-fp4/' "$WORK/profile.yaml" >"$WORK/unknown.yaml"
run_bounded 60 /dev/null "$WORK/unknown.err" "$WORK/unknown.yaml" --workers 1 --out "$WORK/unknown"
[ "$RUN_RC" != 0 ] || fail "a run with an unknown mock profile exited 0"
grep -q "^run: $WORK/unknown.yaml: the embedded mock refused the options of the mock section: stampede mock: --profile: unknown profile 'tp9-fp4' (known: default tp1-fp8" \
    "$WORK/unknown.err" || fail "unclear refusal: $(cat "$WORK/unknown.err")"
echo "ok: profile and max_model_len reached the embedded mock; ignored with a note under --target"
