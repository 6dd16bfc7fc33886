#!/bin/bash
# Three identical sweep levels (concurrency 4, chats of 3 turns) against the embedded mock with its
# prefix cache on (the default engine). With fresh text (the default) every level and repetition
# sends its own prompt words: no request body is sent twice in the sweep, warm-up bodies are not
# measured ones, and each level's prefix-cache hit rate is within 5 points of the first's, its TTFT
# p50 within 25 %. With sweep.fresh_text: false the levels replay the same prompts into the cache
# the first filled: the hit rate climbs and TTFT falls, as before fresh text.
# ctest: parallel (hit rates from the mock's usage and ratios of TTFT; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

cat >"$WORK/fresh.yaml" <<YAML
seed: 7
target: {ignore_eos: true}
workload: {kind: chat, turns: 3, system_prompt_tokens: 64, input_tokens: 300, output_tokens: 16}
scheduler: {kind: concurrent}
sweep:
  concurrency: [4, 4, 4]
  warmup: 300ms
  snapshots: {count: 1, duration: 1500ms}
output: {trace: true}
validity: {max_schedule_lag: 2s}
YAML
sed 's/^  concurrency: \[4, 4, 4\]$/&\n  fresh_text: false/' "$WORK/fresh.yaml" >"$WORK/warm.yaml"
grep -q "fresh_text: false" "$WORK/warm.yaml" || fail "the warm file has no fresh_text: false"

for kind in fresh warm; do
    run_bounded 90 /dev/null "$WORK/$kind.err" "$WORK/$kind.yaml" --workers 1 --out "$WORK/$kind"
    [ "$RUN_RC" = 0 ] || fail "the $kind sweep exited $RUN_RC: $(tail -5 "$WORK/$kind.err")"
done

# Every request's body hash, by level, split into warm-up and measured.
PRELUDE='
import glob
def bodies(level):
    rep = level["repetitions"][0]
    trace = os.path.join(sys.argv[1], os.path.dirname(rep["results"]), "requests.jsonl")
    rows = [json.loads(line) for line in open(trace)]
    assert rows and all(r["body_hash"] for r in rows), trace
    return ([r["body_hash"] for r in rows if r["warmup"]],
            [r["body_hash"] for r in rows if not r["warmup"]])
levels = results["levels"]
assert len(levels) == 3 and all(l["requests_ok"] > 0 for l in levels), levels
hits = [l["kv_hit_rate_pct"] for l in levels]
ttft = [l["ttft_p50_ms"] for l in levels]
'

check_results "$WORK/fresh" <<PY || fail "fresh text: the levels did not measure alike"
$PRELUDE
assert results["sweep"]["fresh_text"] is True, results["sweep"]
seeds = [l["repetitions"][0]["text_seed"] for l in levels]
assert len(set(seeds)) == 3 and "7" not in seeds, seeds
every = []
for l in levels:
    warm, measured = bodies(l)
    assert warm and measured, l["concurrency"]
    assert not set(warm) & set(measured), "a warm-up body was measured again"
    every += warm + measured
assert len(every) == len(set(every)), "a request body was sent twice in the sweep"
assert all(h is not None and h > 0 for h in hits), hits     # history reuse within a chat
assert max(hits) - min(hits) <= 5, ("hit rates differ by more than 5 points", hits)
assert all(abs(t - ttft[0]) <= 0.25 * ttft[0] for t in ttft), ("TTFT p50 moved", ttft)
print("fresh: hit rates", hits, "TTFT p50", ttft)
PY

check_results "$WORK/warm" <<PY || fail "fresh_text: false did not keep the old behaviour"
$PRELUDE
assert results["sweep"]["fresh_text"] is False, results["sweep"]
assert [l["repetitions"][0]["text_seed"] for l in levels] == ["7"] * 3
first = set(sum(bodies(levels[0]), []))
again = set(sum(bodies(levels[1]), []))
assert first & again, "level 2 sent none of level 1's bodies"
assert hits[2] >= hits[0] + 20, ("no climb in hit rate", hits)
assert ttft[2] < 0.75 * ttft[0], ("TTFT did not fall", ttft)
print("warm: hit rates", hits, "TTFT p50", ttft)
PY
grep -q "fresh_text: false" "$WORK/warm/config.yaml" || fail "config.yaml lost fresh_text: false"
grep -q "^text_seed: " "$WORK/fresh/levels/02-c4/rep-1/config.yaml" ||
    fail "a level's config.yaml does not say its text seed"
echo "ok: fresh text gives every level its own prompts; fresh_text: false replays them"
