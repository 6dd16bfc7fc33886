#!/bin/bash
# stampede calibrate fits max_model_len from the 400s (issue 21): a sweep against an engine whose
# limit is known (tests/data/sim/context-limit.yaml, mock.max_model_len 2500), simulated with
# --trace, calibrates the limit between the largest prompt + max_tokens that passed and the
# smallest refused (measured: 2469 and 2534, written 2500); without the traces it says only an
# estimate (a lower bound) and keeps the base's.
# ctest: parallel (virtual time: no timing asserted)
source "$(dirname "$0")/protocol_lib.sh"

FILE="$STAMPEDE_SRC/tests/data/sim/context-limit.yaml"
timeout 60 "$STAMPEDE" simulate "$FILE" --trace --allow-invalid --out "$WORK/sweep" >/dev/null \
    2>"$WORK/sim.err" || fail "simulate exited $?: $(tail -3 "$WORK/sim.err")"
timeout 60 "$STAMPEDE" calibrate "$WORK/sweep" --out "$WORK/profile.yaml" >"$WORK/cal.out" \
    2>"$WORK/cal.err" || fail "calibrate exited $?: $(cat "$WORK/cal.err")"
python3 - "$WORK/profile.yaml" <<'PY' || fail "max_model_len was not fitted from the 400s: $(grep max_model_len "$WORK/cal.out")"
import re, sys
text = open(sys.argv[1]).read()
limit = int(re.search(r"^  max_model_len: (\d+)", text, re.M).group(1))
block = text.split("calibration:")[1].split("\n  max_model_len:\n")[1]
lower, upper = map(int, re.search(r"between (\d+) .* and (\d+) tokens", block).groups())
assert "fitted: true" in block.split("\n")[0], block
assert lower <= 2500 < upper and lower <= limit < upper, (lower, limit, upper)
assert abs(limit - 2500) <= 25, limit
print(f"max_model_len {limit} (known 2500), bracket [{lower}, {upper})")
PY
# the traces removed: an estimate, said, and the base's limit kept
find "$WORK/sweep" -name requests.jsonl -delete
timeout 60 "$STAMPEDE" calibrate "$WORK/sweep" --out "$WORK/bare.yaml" >"$WORK/bare.out" \
    2>"$WORK/bare.err" || fail "calibrate without traces exited $?: $(cat "$WORK/bare.err")"
grep -q "max_model_len  *32768  *not fitted: [0-9]* requests refused for context length but no trace.*an estimate: above" \
    "$WORK/bare.out" || fail "without traces: $(grep max_model_len "$WORK/bare.out")"
echo "ok: calibrate fits max_model_len from the passed and refused requests' sizes, and says an estimate without them"
