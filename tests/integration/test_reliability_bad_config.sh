#!/bin/bash
# Bad input through the command line, for `stampede run FILE` and `stampede controller FILE`:
#  (a) an unknown key with a typo: stderr holds "FILE:LINE:COL: KEY: unknown key" and the
#      did-you-mean suggestion;
#  (b) a YAML syntax error: "FILE:LINE:COL: YAML syntax error: ...";
#  (c) a bad distribution parameter: "FILE:LINE:COL: workload.input_tokens.sigma: ...";
#  (d) a missing file: "FILE: cannot read the file: No such file or directory";
#  (e) a bad --target URL: the message names the URL and why it is refused.
# Each case: exit status 1 within 10 s (the controller does not wait for workers it cannot use),
# no stack trace or signal, and no lost data: an OUT directory holding a previous run's results
# keeps them byte for byte, and a fresh OUT directory gets no results.json.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

cd "$WORK"
cat >typo.yaml <<'YAML'
target:
  endpoints: [http://127.0.0.1:9]
scheduler:
  kind: concurrent
  concurency: 4
limits:
  max_requests: 4
YAML
printf 'target:\n  endpoints: [http://127.0.0.1:9\nlimits:\n  max_requests: 4\n' >syntax.yaml
cat >dist.yaml <<'YAML'
target:
  endpoints: [http://127.0.0.1:9]
workload:
  input_tokens: {dist: lognormal, mean: 100, sigma: -1}
limits:
  max_requests: 4
YAML
cat >good.yaml <<'YAML'
target:
  endpoints: [http://127.0.0.1:9]
limits:
  max_requests: 4
YAML

# A previous run's results, which no failed start may touch.
mkdir -p kept
echo '{"schema_version": 1, "previous": "run"}' >kept/results.json
echo 'previous: config' >kept/config.yaml
sha_before=$(sha256sum kept/results.json kept/config.yaml)

# Runs `stampede ARGS...` (stderr to $WORK/err), bounded to 10 s; checks exit status 1, that the
# message matches the extended regex $1 and that nothing was written to OUT. A failed check is
# recorded in FAILURES (every case runs, and the end lists them all).
FAILURES=()
expect_refusal() {
    local pattern=$1
    shift
    local rc=0 started elapsed problem=""
    started=$(date +%s%N)
    timeout 10 "$STAMPEDE" "$@" >out.txt 2>err || rc=$?
    elapsed=$((($(date +%s%N) - started) / 1000000))
    if [ "$rc" = 124 ]; then
        problem="still running after 10 s"
    elif [ "$rc" != 1 ]; then
        problem="exit status $rc, expected 1"
    elif ! grep -Eq -- "$pattern" err; then
        problem="stderr does not match /$pattern/"
    elif [ "$(wc -l <err)" -gt 3 ]; then
        problem="more than one short message"
    elif grep -Eqi "assert|segmentation|core dumped" err; then
        problem="crashed"
    elif [ -e fresh/results.json ] || [ -e fresh/config.yaml ]; then
        problem="wrote results into fresh/"
    elif [ "$(sha256sum kept/results.json kept/config.yaml)" != "$sha_before" ]; then
        problem="changed a previous run's results in kept/"
    fi
    if [ -n "$problem" ]; then
        FAILURES+=("stampede $*: $problem; stderr: $(head -c 400 err)")
        echo "  FAILED (${elapsed} ms): stampede $*: $problem" >&2
    else
        echo "  ok (${elapsed} ms): stampede $* -> $(head -1 err)"
    fi
}

for cmd in run controller; do
    for out in fresh kept; do
        if [ "$cmd" = run ]; then
            args=(--workers 2 --out "$out")
        else
            args=(--bind 'tcp://127.0.0.1:*' --expect-workers 2 --register-timeout 30 --out "$out")
        fi
        # (a) the typo, its position (line 5, column 3), the dotted key and the suggestion
        expect_refusal "^$cmd: typo\.yaml:5:3: scheduler\.concurency: unknown key 'concurency'; did you mean 'concurrency'\?$" \
            "$cmd" typo.yaml "${args[@]}"
        # (b) the unclosed flow sequence is found where the next key starts (line 3)
        expect_refusal "^$cmd: syntax\.yaml:[23]:[0-9]+: YAML syntax error: .*flow sequence" \
            "$cmd" syntax.yaml "${args[@]}"
        # (c) sigma must be positive; line 4 and the column of the value
        expect_refusal "^$cmd: dist\.yaml:4:[0-9]+: workload\.input_tokens\.sigma: lognormal needs sigma > 0$" \
            "$cmd" dist.yaml "${args[@]}"
        # (d) the path as given, and the system's reason
        expect_refusal "^$cmd: missing\.yaml: cannot read the file: No such file or directory$" \
            "$cmd" missing.yaml "${args[@]}"
        # (e) a --target that is no URL: which one, and what a URL must look like
        expect_refusal "^$cmd: .*--target.*'?notaurl'?.*http://" \
            "$cmd" good.yaml --target notaurl "${args[@]}"
        # (f) the same endpoint twice: results keyed by URL would silently merge the two
        expect_refusal "^$cmd: --target http://127\.0\.0\.1:9/v1: .*same endpoint as 'http://127\.0\.0\.1:9'" \
            "$cmd" good.yaml --target http://127.0.0.1:9 --target http://127.0.0.1:9/v1 "${args[@]}"
    done
done
if [ "${#FAILURES[@]}" -gt 0 ]; then
    printf 'FAIL: %s\n' "${FAILURES[@]}" >&2
    exit 1
fi
echo "ok: every malformed input refused with its file, line, column and key (or its URL), exit 1, nothing written"
