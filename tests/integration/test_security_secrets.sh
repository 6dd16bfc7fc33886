#!/bin/bash
# Secrets on a secured fleet (a CURVE controller and two workers, loopback): the API key comes from
# a file (target.api_key_file) and the X-Api-Key header from the workers' environment
# ({env: STAMPEDE_TEST_HEADER}, which the controller's environment does not have); the server
# answers every third request with a 401 whose body echoes both. Asserted:
#  - every request carried the key and the header (the preflight before the start too);
#  - neither appears in anything stampede printed or wrote: the controller's stdout and stderr,
#    both workers' logs, results.json, config.yaml, requests.jsonl; the echoed error messages
#    read <redacted> instead;
#  - under umask 022 the output files are created mode 0640.
# ctest: parallel (bounds of seconds, counts and messages; no timing tighter than that)
source "$(dirname "$0")/protocol_lib.sh"

KEY="sk-stampede-secret-$RANDOM$RANDOM$RANDOM"
HEADER_SECRET="hdr-secret-$RANDOM$RANDOM"
printf '%s\n' "$KEY" >"$WORK/api.key"
cat >"$WORK/server.py" <<'PY'
import http.server, itertools, json, sys, threading

seen = open(sys.argv[1], "a", buffering=1)
counter = itertools.count()
lock = threading.Lock()

class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        auth, header = self.headers.get("Authorization"), self.headers.get("X-Api-Key")
        preflight = "X-Stampede-Preflight" in self.headers  # worker 0's check: answered, not counted
        seen.write(json.dumps({"authorization": auth, "x_api_key": header,
                               "preflight": preflight}) + "\n")
        with lock:
            n = 1 if preflight else next(counter)
        if n % 3 == 0:
            data = json.dumps({"error": {"message": "invalid credentials: %s / %s" % (auth, header),
                                         "type": "invalid_request_error"}}).encode()
            self.send_response(401)
            self.send_header("Content-Type", "application/json")
        else:
            chunks = [{"choices": [{"index": 0, "delta": {"content": " hi"}, "finish_reason": "length"}]},
                      {"choices": [], "usage": {"prompt_tokens": 4, "completion_tokens": 1}}]
            data = ("".join("data: %s\n\n" % json.dumps(c) for c in chunks) + "data: [DONE]\n\n").encode()
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

(cd "$WORK" && "$STAMPEDE" keygen controller worker >/dev/null) || fail "keygen failed"
mkdir "$WORK/authorized" && cp "$WORK/worker.pub" "$WORK/authorized/"
write_workload "$WORK/w.yaml" endpoints="[http://${addr#listening on }]" \
    headers="{X-Api-Key: {env: STAMPEDE_TEST_HEADER}}" input_tokens=4 output_tokens=1 concurrency=2 \
    max_requests=30
sed -i "s|^target:|target:\n  api_key_file: $WORK/api.key|" "$WORK/w.yaml"

umask 022
start_controller "$WORK/ctl.err" "$WORK/w.yaml" --bind 'tcp://127.0.0.1:*' --expect-workers 2 \
    --out "$WORK/out" --trace --register-timeout 60 --key "$WORK/controller.key" \
    --authorized-keys "$WORK/authorized"
export STAMPEDE_TEST_HEADER=$HEADER_SECRET
for id in w1 w2; do
    start_once_worker "$id" --key "$WORK/worker.key" --server-key "$WORK/controller.pub"
done
unset STAMPEDE_TEST_HEADER
wait_controller 60
[ "$CONTROLLER_RC" = 0 ] || [ "$CONTROLLER_RC" = 3 ] ||
    fail "controller exit status $CONTROLLER_RC: $(tail -5 "$WORK/ctl.err")"

python3 - "$WORK/seen.jsonl" "$KEY" "$HEADER_SECRET" <<'PY'
import json, sys
rows = [json.loads(line) for line in open(sys.argv[1])]
assert sum(row["preflight"] for row in rows) == 1, "expected one preflight request"
assert len(rows) == 31, f"server saw {len(rows) - 1} requests and the preflight, expected 30"
for row in rows:
    assert row["authorization"] == "Bearer " + sys.argv[2], f"Authorization was {row['authorization']!r}"
    assert row["x_api_key"] == sys.argv[3], f"X-Api-Key was {row['x_api_key']!r}"
PY
for f in "$WORK/ctl.err" "$WORK/ctl.err.out" "$WORK/w1.err" "$WORK/w2.err" "$WORK"/out/*; do
    [ -f "$f" ] || continue
    if grep -qF -e "$KEY" -e "$HEADER_SECRET" "$f"; then
        fail "a secret leaked into $(basename "$f"): $(grep -F -e "$KEY" -e "$HEADER_SECRET" "$f" | head -2)"
    fi
done
grep -q 'invalid credentials: Bearer <redacted> / <redacted>' "$WORK/out/requests.jsonl" ||
    fail "the echoed 401 messages are not in the trace, redacted: $(grep -m1 401 "$WORK/out/requests.jsonl")"
grep -q 'X-Api-Key"\?: {env: "\?STAMPEDE_TEST_HEADER"\?}' "$WORK/out/config.yaml" ||
    fail "config.yaml does not show where the header comes from: $(grep -A3 headers "$WORK/out/config.yaml")"
for f in results.json config.yaml requests.jsonl; do
    [ -s "$WORK/out/$f" ] || fail "$f was not written"
    assert_equal "mode of $f" "$(stat -c %a "$WORK/out/$f")" 640
done
echo "ok: key and header reached the server on all 30 requests and nowhere else; outputs 0640"
