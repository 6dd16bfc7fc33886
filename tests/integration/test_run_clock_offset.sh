#!/bin/bash
# A worker whose clock reads 5 s ahead (test hook STAMPEDE_TEST_CLOCK_OFFSET_NS) is measured by
# the clock probes and converted: its TTFT/E2E equal an unshifted worker's, and its requests sit on
# the same timeline (same start instant, same end) instead of 5 s away.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 50 --itl-ms 10
URL=$MOCK_URL
write_workload "$WORK/offset.yaml" seed=3 api=chat model=mock-llama ignore_eos=true \
    endpoints="[$URL]" input_tokens=16 output_tokens=10 concurrency=4 max_requests=80

start_controller "$WORK/ctl.err" "$WORK/offset.yaml" --bind 'tcp://127.0.0.1:*' \
    --expect-workers 2 --out "$WORK/out" --trace --register-timeout 20
STAMPEDE_TEST_CLOCK_OFFSET_NS=5000000000 start_once_worker shifted
start_once_worker plain
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || fail "controller exited $CONTROLLER_RC: $(tail -5 "$WORK/ctl.err")"
grep -q "TEST HOOK: clock readings shifted by 5000000000 ns" "$WORK/shifted.err" ||
    fail "the shifted worker did not announce its test hook"

check_results "$WORK/out" <<'PY'
clocks = {c["worker"]: c for c in results["run"]["clock"]}
shifted = [w for w, c in clocks.items() if c["offset_ms"] > 4000]
plain = [w for w, c in clocks.items() if abs(c["offset_ms"]) < 5]
assert len(shifted) == 1 and len(plain) == 1, f"expected one worker ~5000 ms ahead, one at ~0: {clocks}"
s, p = shifted[0], plain[0]
off = clocks[s]["offset_ms"]
assert abs(off - 5000) <= 1.0, f"measured offset {off} ms, expected 5000 within 1 ms"

assert len(rows) == 80, f"{len(rows)} trace lines, expected 80"
by = {s: [], p: []}
for r in rows:
    assert r["error"] == "none", r
    by[r["worker"]].append(r)
assert len(by[s]) == 40 and len(by[p]) == 40, {k: len(v) for k, v in by.items()}

import statistics

# Medians, not means: one request held up 40 ms on a loaded machine moves a mean of 40 by 1 ms;
# the fault this looks for (a reading left 5 s off) moves either by thousands.
def median(rs, key):
    return statistics.median(r[key] for r in rs)

for key in ("ttft_ms", "e2e_ms"):
    a, b = median(by[s], key), median(by[p], key)
    assert abs(a - b) <= 0.02 * b, f"{key}: shifted worker {a:.3f}, plain {b:.3f} (2 % apart at most)"
    print(f"{key}: shifted {a:.3f} ms, plain {b:.3f} ms (medians)")
ttft = median(by[s], "ttft_ms")
assert abs(ttft - 50) <= 1.0, f"shifted worker TTFT median {ttft:.3f} ms, expected 50 within 2 %"

# Timeline (µs since the run start, controller clock): both start together and end together.
first = {w: min(r["send_us"] for r in by[w]) for w in by}
last = {w: max(r["end_us"] for r in by[w]) for w in by}
assert 0 <= first[s] < 50000, f"shifted worker's first send at {first[s]} us after the start"
assert abs(first[s] - first[p]) < 20000, f"first sends {first} us apart by more than 20 ms"
assert abs(last[s] - last[p]) < 500000, f"last ends {last} us: not on one timeline"
for r in by[s]:
    assert r["send_us"] <= r["first_token_us"] <= r["end_us"] < 60e6, r
print(f"first send: shifted {first[s]:.0f} us, plain {first[p]:.0f} us; offset {off:.3f} ms")
PY
echo "ok: clock offset undone"
