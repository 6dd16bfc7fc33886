#!/bin/bash
# Token events that arrive in one read are one chunk. truth_server.py produces 30 tokens per
# reply on a true 20 ms gap but writes them 2 or 3 events per send() (alternating), without usage,
# so the truth for every ITL sample is 20 ms. For each variant, through `stampede run --trace`:
#  - ITL p50 within 0.5 ms of 20 ms, p90 within 2 ms, and ITL min > 0 (no sample of 0 from
#    coalescing). The p90 carries the Python server's late wake-ups on a loaded machine (a CI run
#    read 40.8 ms on the 40 ms gap); every fault this test looks for moves both by 6 ms or more
#    (a chunk's gap given to one token: 40 or 60 ms; words counted as tokens: 13.3 ms);
#  - the ITL sample count equals output tokens minus the tokens of every request's first chunk;
#  - every request ok.
# Variants: plain; reasoning_content deltas for the first 10 tokens; response headers 30 ms late;
# Connection: close on every reply; and several words per event sent one event per send() (no
# usage, so an event is one token as before: 15 events 40 ms apart give ITL 40 ms, count 14).
source "$(dirname "$0")/protocol_lib.sh"

# start_server NAME ARGS...: truth_server.py in the background; sets URL.
start_server() {
    start_test_server truth_server.py "$@"
}

# check NAME GAP_MS: the ITL assertions on run NAME's results and trace.
check() {
    check_results "$WORK/$1.out" "$1" "$2" <<'PY'
name, gap = argv[0], float(argv[1])
assert level["requests_ok"] >= 6 and level["requests_failed"] == 0, \
    f"{name}: ok {level['requests_ok']}, failed {level['requests_failed']}"
itl = level["itl_ms"]
for p, bound in (("p50", 0.5), ("p90", 2)):
    assert abs(itl[p] - gap) <= bound, f"{name}: ITL {p} {itl[p]} ms, truth {gap} ms"
assert itl["min"] > 0, f"{name}: ITL min {itl['min']} ms: a coalesced event counted as a gap of 0"
measured = [r for r in rows if not r["warmup"] and r["error"] == "none"]
first = sum((r.get("chunk_tokens") or [1])[0] for r in measured)
expected = level["output_tokens"] - first
assert itl["count"] == expected, \
    f"{name}: {itl['count']} ITL samples, expected output {level['output_tokens']} - first {first}"
print(f"{name}: ITL p50 {itl['p50']:.3f} p90 {itl['p90']:.3f} min {itl['min']:.3f} ms, "
      f"{itl['count']} samples")
PY
}

# variant NAME GAP_MS SERVER_ARGS...: one run of 8 requests, 2 at a time, then its checks.
variant() {
    local name=$1 gap=$2
    shift 2
    start_server "$name" --tokens 30 "$@"
    write_workload "$WORK/$name.yaml" seed=4 model=truth timeout=20s concurrency=2 max_requests=8
    run_bounded 60 "$WORK/$name.table" "$WORK/$name.err" "$WORK/$name.yaml" --workers 1 \
        --target "$URL" --out "$WORK/$name.out" --trace
    assert_equal "$name: exit status" "$RUN_RC" 0
    check "$name" "$gap"
}

variant coalesced 20 --gap-ms 20 --groups 2,3
variant reasoning 20 --gap-ms 20 --groups 2,3 --reasoning 10
variant slow_headers 20 --gap-ms 20 --groups 3,2 --header-delay-ms 30
variant close 20 --gap-ms 20 --groups 2,3 --close
variant words_per_event 40 --gap-ms 40 --groups 1 --words-per-event 3 --tokens 15
echo "ok: ITL is the true per-token gap whatever the events per send()"
