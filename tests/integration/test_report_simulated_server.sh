#!/usr/bin/env bash
# A run with no target is served by the embedded mock, and every output says so: results.json's
# served_by {"simulated": true, "profile": ...}, the terminal table's first line, report.md,
# report.html and `stampede compare`. The same workload with --target (a mock of the test's own,
# which stampede cannot tell from a real server) is served_by {"simulated": false} and says
# nothing of a simulation, but reports what the server said about itself at the preflight (its
# Server header and /v1/models); a vLLM-like server of the test's own also says its /version. A
# sweep on the embedded mock is marked as a run is.
# ctest: parallel (outputs' contents only)
set -euo pipefail
source "$STAMPEDE_SRC/tests/integration/protocol_lib.sh"

cat >"$WORK/run.yaml" <<'YAML'
seed: 2
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent, concurrency: 2}
limits: {max_requests: 12}
mock: {profile: tp1-fp8}
YAML
run_bounded 60 "$WORK/sim.out" "$WORK/sim.err" "$WORK/run.yaml" --workers 1 --out "$WORK/sim"
[ "$RUN_RC" = 0 ] || fail "the run on the embedded mock exited $RUN_RC: $(tail -5 "$WORK/sim.err")"
assert_equal "served_by" \
    "$(json_value "$WORK/sim/results.json" 'json.dumps({k: v for k, v in r["served_by"].items() if k != "reported"}, sort_keys=True)')" \
    '{"profile": "tp1-fp8", "simulated": true}'
first=$(grep -m1 '^stampede results' "$WORK/sim.out")
case "$first" in
*"simulated server (profile tp1-fp8)"*) ;;
*) fail "the table's first line does not say simulated: '$first'" ;;
esac
grep -qF '**Server:** simulated server (profile tp1-fp8)' "$WORK/sim/report.md" ||
    fail "report.md does not say simulated server"
grep -qF 'simulated server (profile tp1-fp8)' "$WORK/sim/report.html" ||
    fail "report.html does not say simulated server"

start_mock --profile tp1-fp8
run_bounded 60 "$WORK/real.out" "$WORK/real.err" "$WORK/run.yaml" --workers 1 \
    --target "$MOCK_URL" --out "$WORK/real"
[ "$RUN_RC" = 0 ] || fail "the run with --target exited $RUN_RC: $(tail -5 "$WORK/real.err")"
assert_equal "served_by with --target" \
    "$(json_value "$WORK/real/results.json" 'json.dumps(r["served_by"], sort_keys=True)')" \
    "{\"reported\": [{\"endpoint\": \"$MOCK_URL\", \"models\": [\"mock-llama\"], \"server_header\": \"stampede-mock\", \"version\": null}], \"simulated\": false}"
grep -qxF "server        $MOCK_URL: Server stampede-mock, models mock-llama" "$WORK/real.out" ||
    fail "the table does not say what the server said: $(grep '^server' "$WORK/real.out")"
if grep -qi "simulated" "$WORK/real.out" "$WORK/real/report.md" "$WORK/real/report.html"; then
    fail "a run with --target says simulated"
fi

# A vLLM-like server: uvicorn's Server header, its model list and /version.
cat >"$WORK/vllm_like.py" <<'PY'
import json, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
class H(BaseHTTPRequestHandler):
    server_version, sys_version = "uvicorn", ""
    def log_message(self, *a): pass
    def answer(self, code, body, ctype):
        self.send_response(code); self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body))); self.end_headers(); self.wfile.write(body)
    def do_GET(self):
        if self.path == "/v1/models":
            self.answer(200, json.dumps({"object": "list", "data": [{"id": "meta-llama/Llama-3.1-8B-Instruct"}]}).encode(), "application/json")
        elif self.path == "/version":
            self.answer(200, b'{"version":"0.10.1"}', "application/json")
        else:
            self.answer(404, b'{"detail":"Not Found"}', "application/json")
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        chunk = {"id": "c", "object": "chat.completion.chunk", "choices": [{"index": 0, "delta": {"content": "hi"}, "finish_reason": "length"}]}
        self.answer(200, b"data: " + json.dumps(chunk).encode() + b"\n\ndata: [DONE]\n\n", "text/event-stream")
srv = ThreadingHTTPServer(("127.0.0.1", 0), H)
print("listening on 127.0.0.1:%d" % srv.server_address[1], flush=True)
srv.serve_forever()
PY
python3 "$WORK/vllm_like.py" >"$WORK/vllm_like.log" 2>&1 &
BACKGROUND+=($!)
addr=$(wait_for_line "$WORK/vllm_like.log" 10 'listening on [0-9.]+:[0-9]+') || fail "no vLLM-like server"
VLLM_URL="http://${addr#listening on }"
run_bounded 60 "$WORK/vllm.out" "$WORK/vllm.err" "$WORK/run.yaml" --workers 1 \
    --target "$VLLM_URL" --out "$WORK/vllm"
[ "$RUN_RC" = 0 ] || fail "the run against the vLLM-like server exited $RUN_RC: $(tail -5 "$WORK/vllm.err")"
assert_equal "what the vLLM-like server said" \
    "$(json_value "$WORK/vllm/results.json" 'json.dumps(r["served_by"]["reported"][0], sort_keys=True)')" \
    "{\"endpoint\": \"$VLLM_URL\", \"models\": [\"meta-llama/Llama-3.1-8B-Instruct\"], \"server_header\": \"uvicorn\", \"version\": \"0.10.1\"}"
grep -qxF "server        $VLLM_URL: Server uvicorn, version 0.10.1, models meta-llama/Llama-3.1-8B-Instruct" \
    "$WORK/vllm.out" || fail "the table: $(grep '^server' "$WORK/vllm.out")"

timeout 30 "$STAMPEDE" compare "$WORK/real" "$WORK/sim" >"$WORK/compare.md" 2>&1 ||
    fail "compare exited $?: $(tail -3 "$WORK/compare.md")"
grep -qE '^\| sim \| run, simulated server \(profile tp1-fp8\) \|' "$WORK/compare.md" ||
    fail "compare does not mark the simulated run: $(grep '^| ' "$WORK/compare.md" | head -4)"
grep -qE '^\| real \| run \|' "$WORK/compare.md" || fail "compare marks the real run"
timeout 30 "$STAMPEDE" compare --format json "$WORK/real" "$WORK/sim" >"$WORK/compare.json" 2>&1 ||
    fail "compare --format json exited $?"
python3 - "$WORK/compare.json" <<'PY' || fail "compare --format json does not mark the simulated run"
import json, sys
runs = json.load(open(sys.argv[1]))["runs"]
assert [r["simulated"] for r in runs] == [False, True], runs
assert runs[1]["simulated_profile"] == "tp1-fp8", runs
PY

cat >"$WORK/sweep.yaml" <<'YAML'
seed: 2
workload: {input_tokens: 32, output_tokens: 8}
scheduler: {kind: concurrent}
sweep:
  concurrency: [1]
  warmup: 200ms
  snapshots: {count: 1, duration: 400ms}
  drain: 1s
YAML
run_bounded 60 "$WORK/sweep.out" "$WORK/sweep.err" "$WORK/sweep.yaml" --workers 1 \
    --out "$WORK/sweep"
[ "$RUN_RC" = 0 ] || fail "the sweep exited $RUN_RC: $(tail -5 "$WORK/sweep.err")"
assert_equal "the sweep's served_by" \
    "$(json_value "$WORK/sweep/results.json" 'json.dumps({k: v for k, v in r["served_by"].items() if k != "reported"}, sort_keys=True)')" \
    '{"profile": "default", "simulated": true}'
[ "$(head -1 "$WORK/sweep.out")" = "stampede sweep - simulated server (profile default)" ] ||
    fail "the sweep table's first line: '$(head -1 "$WORK/sweep.out")'"
grep -qF '**Server:** simulated server (profile default)' "$WORK/sweep/report.md" ||
    fail "the sweep's report.md does not say simulated server"
echo "PASS"
