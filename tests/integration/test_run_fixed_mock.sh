#!/bin/bash
# `stampede run` with 3 local workers against 3 fixed-mode mocks (TTFT 50 ms, ITL 10 ms): exactly
# max_requests requests, TTFT and ITL means within 2 % of the mock's truth, and round-robin over
# the 3 endpoints balanced to within 1 request.
source "$(dirname "$0")/protocol_lib.sh"

URLS=()
for i in 1 2 3; do
    start_mock --ttft-ms 50 --itl-ms 10
    URLS+=("$MOCK_URL")
done

write_workload "$WORK/fixed.yaml" seed=7 api=chat model=mock-llama ignore_eos=true \
    routing=round_robin input_tokens=32 output_tokens=20 concurrency=6 max_requests=91

run_bounded 120 "$WORK/table" "$WORK/run.err" "$WORK/fixed.yaml" --workers 3 \
    --target "${URLS[0]}" --target "${URLS[1]}" --target "${URLS[2]}" --out "$WORK/out"
[ "$RUN_RC" = 0 ] || fail "stampede run exited $RUN_RC: $(tail -5 "$WORK/run.err")"
R="$WORK/out/results.json"
[ -f "$R" ] || fail "no results.json"

assert_equal "schema_version" "$(json_value "$R" 'r["schema_version"]')" 2
assert_equal "workers" "$(json_value "$R" 'r["run"]["workers"]')" 3
assert_equal "requests_ok" "$(json_value "$R" 'l["requests_ok"]')" 91
assert_equal "requests_failed" "$(json_value "$R" 'l["requests_failed"]')" 0
assert_within "TTFT mean (ms)" "$(json_value "$R" 'l["ttft_ms"]["mean"]')" 50 0.02
assert_within "ITL mean (ms)" "$(json_value "$R" 'l["itl_ms"]["mean"]')" 10 0.02
# 91 requests over 3 endpoints: 31, 30, 30 whatever worker sent which request
counts=$(json_value "$R" 'sorted(l["endpoints"].values())')
assert_equal "requests per endpoint" "$counts" "[30, 30, 31]"
grep -q "TTFT" "$WORK/table" || fail "no end-of-run table on stdout"
echo "ok: 91 requests, TTFT $(json_value "$R" 'round(l["ttft_ms"]["mean"],3)') ms," \
    "ITL $(json_value "$R" 'round(l["itl_ms"]["mean"],3)') ms, endpoints $counts"
