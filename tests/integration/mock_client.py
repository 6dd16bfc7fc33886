"""Raw-socket helpers for the `stampede mock` integration tests (python3 stdlib only).

MockServer starts the binary on a free port and stops it with SIGTERM; Connection speaks
HTTP/1.1 over one keep-alive socket and timestamps every streamed event with
time.monotonic_ns() (CLOCK_MONOTONIC, the clock of the mock's "sent_ns")."""

import json
import os
import signal
import socket
import subprocess
import time

TIMEOUT_S = 20


class MockServer:
    def __init__(self, *args):
        binary = os.environ.get("STAMPEDE")
        if not binary:
            raise SystemExit("STAMPEDE (path of the stampede binary) is not set")
        self.proc = subprocess.Popen([binary, "mock", "--port", "0", *args],
                                     stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        line = self.proc.stdout.readline().strip()
        if not line.startswith("listening on "):
            err = self.proc.stderr.read() if self.proc.poll() is not None else ""
            self.proc.kill()
            raise AssertionError(f"mock did not announce its port: {line!r} {err!r}")
        host, port = line[len("listening on "):].rsplit(":", 1)
        self.host, self.port = host, int(port)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.stop()

    def stop(self):
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                rc = self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                raise AssertionError("mock did not exit within 10 s of SIGTERM")
            if rc != 0:
                raise AssertionError(f"mock exited with {rc} after SIGTERM, expected 0")

    def connect(self):
        return Connection(self.host, self.port)


class Response:
    def __init__(self):
        self.status = 0
        self.headers = {}
        self.body = b""
        self.events = []  # (recv_ns, data) per SSE event, in order
        self.sent_ns = 0  # when the request left (monotonic ns)

    def json(self):
        return json.loads(self.body)

    def chunks(self):
        """The JSON payloads of the stream (not [DONE])."""
        return [json.loads(d) for _, d in self.events if d != "[DONE]"]

    def token_events(self):
        """(recv_ns, chunk) of each chunk that carries a token (content, reasoning or text)."""
        out = []
        for recv, data in self.events:
            if data == "[DONE]":
                continue
            chunk = json.loads(data)
            if not chunk.get("choices"):
                continue
            choice = chunk["choices"][0]
            delta = choice.get("delta", {})
            if "text" in choice or "content" in delta and delta["content"] or \
                    delta.get("reasoning_content"):
                out.append((recv, chunk))
        return out


class Connection:
    def __init__(self, host, port):
        self.sock = socket.create_connection((host, port), timeout=TIMEOUT_S)
        self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""

    def close(self):
        self.sock.close()

    def send_raw(self, data):
        self.sock.sendall(data)

    def send(self, method, path, body=None, headers=None):
        """Sends one request; returns its monotonic send time."""
        payload = b"" if body is None else (body if isinstance(body, bytes)
                                             else json.dumps(body).encode())
        lines = [f"{method} {path} HTTP/1.1", "Host: mock"]
        for k, v in (headers or {}).items():
            lines.append(f"{k}: {v}")
        if body is not None or method == "POST":
            lines.append(f"Content-Length: {len(payload)}")
        head = ("\r\n".join(lines) + "\r\n\r\n").encode()
        t = time.monotonic_ns()
        self.sock.sendall(head + payload)
        return t

    def _fill(self):
        data = self.sock.recv(65536)
        if not data:
            raise EOFError("connection closed by the mock")
        self.buf += data
        return time.monotonic_ns()

    def _line(self):
        while b"\r\n" not in self.buf:
            self._fill()
        line, self.buf = self.buf.split(b"\r\n", 1)
        return line.decode()

    def _exact(self, n):
        while len(self.buf) < n:
            self._fill()
        data, self.buf = self.buf[:n], self.buf[n:]
        return data

    def read_response(self, head_only=False):
        r = Response()
        status = self._line()
        parts = status.split(" ", 2)
        r.status = int(parts[1])
        while True:
            line = self._line()
            if not line:
                break
            k, v = line.split(":", 1)
            r.headers[k.strip().lower()] = v.strip()
        if r.status == 100:
            return r
        if head_only:
            return r
        if r.headers.get("transfer-encoding") == "chunked":
            self._read_chunked(r)
        elif "content-length" in r.headers:
            r.body = self._exact(int(r.headers["content-length"]))
        else:  # HTTP/1.0 style: until close
            try:
                while True:
                    self._fill()
            except EOFError:
                pass
            r.body, self.buf = self.buf, b""
            self._parse_events(r, r.body, time.monotonic_ns())
        return r

    def _read_chunked(self, r):
        pending = b""
        while True:
            size = int(self._line(), 16)
            if size == 0:
                self._line()
                break
            while len(self.buf) < size + 2:
                self._fill()
            recv = time.monotonic_ns()
            data = self._exact(size)
            assert self._exact(2) == b"\r\n", "HTTP chunk not followed by CRLF"
            r.body += data
            pending += data
            while b"\n\n" in pending:
                event, pending = pending.split(b"\n\n", 1)
                self._parse_events(r, event + b"\n\n", recv)

    @staticmethod
    def _parse_events(r, text, recv):
        for event in text.split(b"\n\n"):
            if not event.strip():
                continue
            data = [ln[5:].strip() for ln in event.split(b"\n") if ln.startswith(b"data:")]
            r.events.append((recv, b"\n".join(data).decode()))

    def request(self, method, path, body=None, headers=None):
        t = self.send(method, path, body, headers)
        r = self.read_response(head_only=(method == "HEAD"))
        r.sent_ns = t
        return r


def request(server, method, path, body=None, headers=None):
    c = server.connect()
    try:
        return c.request(method, path, body, headers)
    finally:
        c.close()


def words(n, offset=0):
    """A prompt of n distinct-looking words."""
    return " ".join(f"w{(i + offset) % 997}" for i in range(n))


def chat(content, **kw):
    body = {"model": "mock-llama", "messages": [{"role": "user", "content": content}]}
    body.update(kw)
    return body


def percentile(values, q):
    s = sorted(values)
    if not s:
        raise AssertionError("no values")
    k = min(len(s) - 1, max(0, int(round(q * (len(s) - 1)))))
    return s[k]
