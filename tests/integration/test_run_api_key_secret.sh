#!/bin/bash
# The API key reaches the server and nothing else: `stampede run` with target.api_key_env and a
# secret-looking extra header against a small recording server. Asserted:
#  - every request carried "Authorization: Bearer <key>" and the X-Api-Key header, the preflight
#    before the start as well;
#  - neither secret appears anywhere stampede wrote: stdout, stderr, results.json, config.yaml
#    (where the header is redacted), requests.jsonl, workers.log.
# ctest: parallel (content and counts only; no tight timing)
source "$(dirname "$0")/protocol_lib.sh"

KEY="sk-stampede-test-$RANDOM$RANDOM$RANDOM"
HEADER_SECRET="hdr-secret-$RANDOM$RANDOM"
cat >"$WORK/server.py" <<'PY'
import http.server, json, sys, threading

seen = open(sys.argv[1], "a", buffering=1)

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        seen.write(json.dumps({"authorization": self.headers.get("Authorization"),
                               "x_api_key": self.headers.get("X-Api-Key"),
                               "preflight": "X-Stampede-Preflight" in self.headers}) + "\n")
        chunks = [{"choices": [{"index": 0, "delta": {"content": " hello"}, "finish_reason": None}]},
                  {"choices": [{"index": 0, "delta": {"content": " world"}, "finish_reason": "length"}]},
                  {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 2}}]
        body = "".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n"
        data = body.encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print("listening on 127.0.0.1:%d" % server.server_address[1], flush=True)
server.serve_forever()
PY
python3 "$WORK/server.py" "$WORK/seen.jsonl" >"$WORK/server.out" 2>&1 &
BACKGROUND+=($!)
addr=$(wait_for_line "$WORK/server.out" 10 'listening on [0-9.]+:[0-9]+') ||
    fail "the recording server did not start: $(cat "$WORK/server.out")"

write_workload "$WORK/w.yaml" endpoints="[http://${addr#listening on }]" \
    api_key_env=STAMPEDE_TEST_API_KEY headers="{X-Api-Key: $HEADER_SECRET}" input_tokens=4 \
    output_tokens=2 concurrency=2 max_requests=10
STAMPEDE_TEST_API_KEY=$KEY timeout 60 "$STAMPEDE" run "$WORK/w.yaml" --workers 2 \
    --out "$WORK/out" --trace >"$WORK/stdout" 2>"$WORK/stderr" ||
    fail "run failed: $(cat "$WORK/stderr")"

python3 - "$WORK/seen.jsonl" "$KEY" "$HEADER_SECRET" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
preflights = sum(row["preflight"] for row in rows)  # worker 0's check before the start
assert preflights == 1, f"server saw {preflights} preflight requests, expected 1"
assert len(rows) == 11, f"server saw {len(rows) - 1} requests and the preflight, expected 10"
for row in rows:
    assert row["authorization"] == "Bearer " + sys.argv[2], f"Authorization was {row['authorization']!r}"
    assert row["x_api_key"] == sys.argv[3], f"X-Api-Key was {row['x_api_key']!r}"
PY
for f in "$WORK/stdout" "$WORK/stderr" "$WORK"/out/*; do
    [ -f "$f" ] || continue
    if grep -qF -e "$KEY" -e "$HEADER_SECRET" "$f"; then
        fail "a secret leaked into $(basename "$f")"
    fi
done
for f in results.json config.yaml requests.jsonl; do
    [ -s "$WORK/out/$f" ] || fail "$f was not written"
done
grep -q "redacted" "$WORK/out/config.yaml" || fail "config.yaml does not show the header as redacted"
echo "ok: the key and the secret header reached the server on all 10 requests (and the preflight) and nowhere else"
