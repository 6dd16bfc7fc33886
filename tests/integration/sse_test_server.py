"""What the tests' own HTTP/1.1 servers share (imported by truth_server.py, reliability_server.py
and the other servers of this folder).

The HTTP request reading (Expect: 100-continue answered, Content-Length honoured, the bytes of a
pipelined next request kept), the chunked SSE writing, and the listener that prints
"listening on 127.0.0.1:PORT" once it accepts and serves each connection on a thread.
"""
import json
import signal
import socket
import sys
import threading


def chunk(data):
    """One HTTP/1.1 chunk carrying the text `data`."""
    raw = data.encode()
    return b"%x\r\n%s\r\n" % (len(raw), raw)


def sse_event(obj):
    """One chunk carrying the SSE event `data: <obj as compact JSON>`."""
    return chunk("data: " + json.dumps(obj, separators=(",", ":")) + "\n\n")


def named_event(name, obj):
    """One chunk carrying the SSE event `event: <name>` with `data: <obj as compact JSON>`, as the
    Anthropic Messages and OpenAI Responses streams frame every event."""
    return chunk("event: %s\ndata: %s\n\n" % (name, json.dumps(obj, separators=(",", ":"))))


def completion_chunk(completion_id, model, delta, finish=None):
    """A chat.completion.chunk event of one choice."""
    return sse_event({"id": completion_id, "object": "chat.completion.chunk", "created": 0,
                      "model": model, "choices": [{"index": 0, "delta": delta,
                                                   "finish_reason": finish}]})


DONE_AND_END = chunk("data: [DONE]\n\n") + b"0\r\n\r\n"

SSE_HEADERS = b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n"


# What a server without the path answers (a GET of /metrics on a server that has none: the
# controller's server_metrics: auto, the default, asks each endpoint for it).
NOT_FOUND = (b"HTTP/1.1 404 Not Found\r\nContent-Type: text/plain\r\nContent-Length: 9\r\n"
             b"Connection: close\r\n\r\nnot found")


def json_response(obj):
    """A whole 200 response with `obj` as its JSON body, closing the connection."""
    body = json.dumps(obj).encode()
    return (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body))


def send_whole(handler, status, content_type, body):
    """Answers the request of an http.server handler with status and the bytes `body`."""
    handler.send_response(status)
    handler.send_header("Content-Type", content_type)
    handler.send_header("Content-Length", str(len(body)))
    handler.end_headers()
    handler.wfile.write(body)


PREFLIGHT_REPLY = (SSE_HEADERS + b"\r\n"
                   + completion_chunk("chatcmpl-preflight", "preflight", {"content": "ok"}, "length")
                   + DONE_AND_END)


def read_request(conn, data=b"", headers=None):
    """Reads one request from `conn` after the bytes `data` already read: (request line, body,
    the bytes read past the body), or (None, None, b"") when the peer closes first; the request's
    headers (lower-case names) go into the dict `headers` when one is given. stampede's
    preflight requests (X-Stampede-Preflight) are answered here and never returned, so a server's
    counts and plans are the run's own, as the embedded mock's are."""
    while True:
        request_line, body, data, preflight = read_one_request(conn, data, headers)
        if not preflight:
            return request_line, body, data
        conn.sendall(PREFLIGHT_REPLY)


def read_one_request(conn, data, seen=None):
    """read_request's one request, and whether it is a preflight."""
    while b"\r\n\r\n" not in data:
        more = conn.recv(65536)
        if not more:
            return None, None, b"", False
        data += more
    head, _, rest = data.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    headers = {}
    for line in lines[1:]:
        name, _, value = line.partition(":")
        headers[name.strip().lower()] = value.strip()
    if seen is not None:
        seen.clear()
        seen.update(headers)
    if headers.get("expect", "").lower() == "100-continue":
        conn.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
    length = int(headers.get("content-length", "0"))
    while len(rest) < length:
        more = conn.recv(65536)
        if not more:
            return None, None, b"", False
        rest += more
    return lines[0], rest[:length], rest[length:], "x-stampede-preflight" in headers


def each_request(conn, headers=None):
    """Yields (request line, body) for each request on the keep-alive connection `conn`, in
    order, until the peer closes it; the dict `headers`, when given, holds the request's headers
    while it is handled."""
    pending = b""
    while True:
        request_line, body, pending = read_request(conn, pending, headers)
        if request_line is None:
            return
        yield request_line, body


def serve_forever(serve):
    """Listens on an ephemeral loopback port, says so on stdout, and runs serve(conn) on a thread
    per connection until SIGTERM."""
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(0))
    print("listening on 127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    while True:
        conn, _ = listener.accept()
        conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        threading.Thread(target=serve, args=(conn,), daemon=True).start()
