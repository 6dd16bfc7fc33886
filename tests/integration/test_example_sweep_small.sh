#!/bin/bash
# examples/sweep-small.yaml runs verbatim, as the README tells a user to (`stampede run
# examples/sweep-small.yaml --workers 2`), on the embedded mock with the h200-llama70b profile:
# four levels or more, each with its warm-up, three snapshots and two valid repetitions, TPOT
# rising with concurrency as the profile's step time says. It took ~55 s on a loaded 2-core machine (docs/sweeps.md); the time is
# printed, not asserted.
# ctest: parallel (counts and the shape of the curve; no timing asserted)
source "$(dirname "$0")/protocol_lib.sh"

start=$(date +%s)
run_bounded 240 "$WORK/table" "$WORK/sweep.err" "$STAMPEDE_SRC/examples/sweep-small.yaml" \
    --workers 2 --out "$WORK/out"
elapsed=$(($(date +%s) - start))
[ "$RUN_RC" = 0 ] || fail "examples/sweep-small.yaml exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
check_results "$WORK/out" <<'PY' || fail "examples/sweep-small.yaml's results are not a sweep's"
levels = results["levels"]
assert results["kind"] == "sweep" and len(levels) >= 4, len(levels)
sweep = results["sweep"]
for l in levels:
    assert l["valid_runs_label"] == "2/2", (l["concurrency"], l["valid_runs_label"])
    for rep in l["repetitions"]:
        assert len(rep["snapshots"]) == 3, (l["concurrency"], len(rep["snapshots"]))
        assert rep["snapshots"][0]["start_s"] > 0, "no warm-up before the first snapshot"
        assert rep["window"]["requests_ok"] > 0
tpot = [l["tpot_p50_ms"] for l in levels]
assert tpot == sorted(tpot), f"TPOT p50 does not rise with concurrency: {tpot}"
# the h200-llama70b engine: a step of 15 ms + 0.555 ms per sequence in the batch (docs/mock.md)
for l in levels:
    model = 15 + 0.555 * l["concurrency"]
    assert abs(l["tpot_p50_ms"] - model) <= 0.15 * model, (l["concurrency"], l["tpot_p50_ms"], model)
print(f"ok: {len(levels)} levels x 2 repetitions x 3 snapshots; TPOT p50 {tpot}")
PY
echo "ok: examples/sweep-small.yaml ran verbatim in $elapsed s"
