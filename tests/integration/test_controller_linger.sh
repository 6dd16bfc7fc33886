#!/bin/bash
# ctest: parallel
# controller --linger --print-report (docs/kubernetes.md "Fetching the results"): after the run the
# controller prints report.md on stdout, closes the worker sockets and serves the results
# directory read-only on the --metrics-listen port: files byte for byte, a listing, and 404 for
# every way out of the directory (.., encoded .., hidden files, a symbolic link out); SIGTERM ends
# the linger with the run's exit status.
source "$(dirname "$0")/protocol_lib.sh"

start_mock --ttft-ms 5 --itl-ms 5
write_workload "$WORK/w.yaml" ignore_eos=true endpoints="[$MOCK_URL]" output_tokens=5 \
    concurrency=2 max_requests=20
echo "outside the results" >"$WORK/secret.txt"
start_controller "$WORK/ctl.err" "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --out "$WORK/out" --register-timeout 20 --metrics-listen 127.0.0.1:0 --linger 60s \
    --print-report
addr=$(wait_for_line "$WORK/ctl.err" 10 'metrics on http://[0-9.]+:[0-9]+') ||
    fail "no metrics address: $(cat "$WORK/ctl.err")"
base="http://${addr#metrics on http://}"
start_once_worker w0
wait_for_line "$WORK/ctl.err" 30 "serving .* read-only at http://[0-9.:]+/results/ for 1m" >/dev/null ||
    fail "the controller did not linger: $(cat "$WORK/ctl.err")"
kill -0 "$CONTROLLER_PID" || fail "the controller exited instead of lingering"
ln -s "$WORK/secret.txt" "$WORK/out/escape.txt"

curl -sf --max-time 5 "$base/results/results.json" -o "$WORK/got.json" ||
    fail "GET /results/results.json failed"
cmp "$WORK/got.json" "$WORK/out/results.json" || fail "results.json served differs from the file"
type=$(curl -s --max-time 5 -o /dev/null -w '%{content_type}' "$base/results/results.json")
assert_equal "results.json content type" "$type" "application/json"
curl -sf --max-time 5 "$base/results/" -o "$WORK/list.txt" || fail "GET /results/ failed"
grep -qx "results.json" "$WORK/list.txt" || fail "listing lacks results.json: $(cat "$WORK/list.txt")"
grep -qx "report.md" "$WORK/list.txt" || fail "listing lacks report.md: $(cat "$WORK/list.txt")"
curl -sf --max-time 5 "$base/results/report.md" -o "$WORK/report.md" &&
    cmp "$WORK/report.md" "$WORK/out/report.md" ||
    fail "report.md served differs"
curl -sf --max-time 5 "$base/metrics" -o "$WORK/metrics.txt" || fail "GET /metrics failed"
grep -q '^stampede_requests_total' "$WORK/metrics.txt" ||
    fail "/metrics is no longer served during the linger"
for path in /results/../secret.txt /results/%2e%2e/secret.txt /results/..%2fsecret.txt \
    /results/escape.txt /results//etc/passwd /results/.hidden /etc/passwd '/results/a\..\b'; do
    status=$(curl -s --path-as-is --max-time 5 -o /dev/null -w '%{http_code}' "$base$path")
    assert_equal "status of $path" "$status" 404
done
status=$(curl -s --max-time 5 -o /dev/null -w '%{http_code}' -X POST "$base/results/results.json")
assert_equal "status of a POST" "$status" 405

# The Markdown summary went to stdout (the pod's log), whole.
grep -qF "<!-- $WORK/out/report.md -->" "$WORK/ctl.err.out" || fail "no report.md on stdout"
tail -c "$(stat -c %s "$WORK/out/report.md")" "$WORK/ctl.err.out" | cmp - "$WORK/out/report.md" ||
    fail "the report printed differs from report.md"

kill -TERM "$CONTROLLER_PID"
wait_controller 10
assert_equal "controller exit status after SIGTERM in the linger" "$CONTROLLER_RC" 0
grep -q "interrupted; no longer serving the results" "$WORK/ctl.err" ||
    fail "the linger's end was not said: $(tail -3 "$WORK/ctl.err")"

# --linger needs the metrics port.
rc=0
"$STAMPEDE" controller "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 1 \
    --linger 10s 2>"$WORK/bad.err" || rc=$?
assert_equal "--linger without --metrics-listen" "$rc" 1
grep -q "pass --metrics-listen" "$WORK/bad.err" || fail "unclear error: $(cat "$WORK/bad.err")"
echo "ok: the results served read-only during the linger, the report printed"
