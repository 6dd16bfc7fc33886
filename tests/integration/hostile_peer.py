#!/usr/bin/env python3
"""Hostile ZeroMQ peers for the tests: ZMTP 3.0 with the NULL mechanism over raw sockets (no pyzmq
needed) and hand-encoded protobuf (proto/stampede.proto), so every byte is under the test's control.

usage:
  hostile_peer.py HOST:PORT CLAIM SEND [TIMEOUT_S]
      a DEALER that sends one message frame whose header claims CLAIM bytes followed by SEND bytes
      of body, and reports when the peer closes the connection: prints "local port P", then
      "closed after B body bytes" or "still open after B body bytes".
  hostile_peer.py garbage HOST:PORT IDENTITY COUNT
      a DEALER with routing id IDENTITY that sends COUNT messages that are not protobuf Envelopes
      (a truncated varint, a varint past 10 bytes, an unknown wire type, a length past the end, a
      group, then field number 0 and random bytes), gives the peer a second to read them, and
      prints "local port P" and "sent N undecodable messages".
  hostile_peer.py fake-worker HOST:PORT IDENTITY PID RECORDS...
      registers as a worker (Hello, clock probes, Ready with the assigned concurrency), and once the
      run starts sends on the data socket, in turn, one EventBatch per RECORDS with that many empty
      records (seq 1, 2, ...), each followed by 1.5 s of heartbeats, then one undecodable message,
      then a Done (none of its batches counted); then heartbeats until the Stop that releases it.
      Prints "started", "sent batch S of N records (B bytes); RSS K KiB, peak H KiB" (of process
      PID, the controller), "sent garbage", "done", "released".
  hostile_peer.py lying-worker HOST:PORT IDENTITY [KEY_FILE SERVER_PUB_FILE]
      registers as a worker (with KEY_FILE, a `stampede keygen` secret key, and the controller's
      public key: over CURVE through pyzmq, Debian's python3-zmq, so run by /usr/bin/python3), and 1 s after the start sends four batches of one record each: 2^31
      output tokens, a session index of 2^40, an end 10^15 ns after its send, then an honest one
      (16 tokens); then a heartbeat claiming 2^64 - 1 sessions started (frontier 2^63); then goes
      silent (as if killed) for 30 s. Prints "started", "lied".
  hostile_peer.py fake-controller YAML_FILE RECORDS
      binds 127.0.0.1 on a free port (prints "listening on tcp://127.0.0.1:P"), welcomes the one
      worker that connects, sends it twice a control message whose body unpacks to RECORDS empty
      records (an EventBatch, which no worker expects), three undecodable messages, then an Assign
      whose config_yaml is YAML_FILE's text, and waits for its Ready; prints "worker pid P; RSS K
      KiB", the worker's RSS after each step, "ready ok=BOOL error=TEXT", then after the worker's
      Done sends a Stop and prints "released".
"""
import os
import random
import select
import socket
import struct
import sys
import time

PROTOCOL_VERSION = 1


# --- ZMTP 3.0, NULL mechanism ---------------------------------------------------------------

def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed by the peer")
        data += chunk
    return data


def greeting(as_server=False):
    return (b"\xff" + b"\x00" * 7 + b"\x01" + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\x00")
            + (b"\x01" if as_server else b"\x00") + b"\x00" * 31)


def command(name, body=b""):
    data = bytes([len(name)]) + name + body
    if len(data) > 255:
        return b"\x06" + struct.pack(">Q", len(data)) + data
    return bytes([0x04, len(data)]) + data


def ready_command(socket_type, identity=None):
    props = [(b"Socket-Type", socket_type)]
    if identity is not None:
        props.append((b"Identity", identity))
    body = b"".join(bytes([len(k)]) + k + struct.pack(">I", len(v)) + v for k, v in props)
    return command(b"READY", body)


def read_frame(sock):
    flags = recv_exact(sock, 1)[0]
    size = struct.unpack(">Q", recv_exact(sock, 8))[0] if flags & 0x02 else recv_exact(sock, 1)[0]
    return flags, recv_exact(sock, size)


def frame(body, more=False):
    flags = 0x01 if more else 0x00
    if len(body) > 255:
        return bytes([flags | 0x02]) + struct.pack(">Q", len(body)) + body
    return bytes([flags, len(body)]) + body


class Zmtp:
    """One ZMTP connection: handshake, single-frame messages, PINGs answered."""

    def __init__(self, sock, socket_type, identity=None, as_server=False):
        self.sock = sock
        sock.sendall(greeting(as_server))
        recv_exact(sock, 64)
        sock.sendall(ready_command(socket_type, identity))
        flags, body = read_frame(sock)
        assert flags & 0x04 and body.startswith(b"\x05READY"), "no READY from the peer"
        self.peer_identity = None
        props = body[6:]
        while props:
            klen = props[0]
            key = props[1:1 + klen]
            vlen = struct.unpack(">I", props[1 + klen:5 + klen])[0]
            value = props[5 + klen:5 + klen + vlen]
            props = props[5 + klen + vlen:]
            if key.lower() == b"identity":
                self.peer_identity = value

    def send(self, body):
        self.sock.sendall(frame(body))

    def recv(self, timeout):
        """The next message (its frames joined), or None after timeout seconds."""
        deadline = time.monotonic() + timeout
        parts = []
        while True:
            left = max(0.0, deadline - time.monotonic())
            ready, _, _ = select.select([self.sock], [], [], left)
            if not ready:
                return None
            flags, body = read_frame(self.sock)
            if flags & 0x04:  # a command
                if body.startswith(b"\x04PING"):
                    context = body[7:][:16]  # after the name and the 2-byte TTL
                    self.sock.sendall(command(b"PONG", context))
                continue
            parts.append(body)
            if not flags & 0x01:
                return b"".join(parts)


class CurvePeer:
    """A DEALER through libzmq with CURVE and a real key (pyzmq: Debian's python3-zmq, run by
    /usr/bin/python3), with Zmtp's interface: what such a peer sends goes through the controller's
    ZAP check like any worker's."""

    def __init__(self, endpoint, identity, secret, server):
        import zmq
        self.ctx = zmq.Context.instance()
        self.sock = self.ctx.socket(zmq.DEALER)
        self.sock.setsockopt(zmq.IDENTITY, identity)
        self.sock.setsockopt(zmq.LINGER, 500)
        self.sock.curve_secretkey = secret
        self.sock.curve_publickey = zmq.curve_public(secret)
        self.sock.curve_serverkey = server
        self.sock.connect(endpoint)

    def send(self, body):
        self.sock.send(body)

    def recv(self, timeout):
        return self.sock.recv() if self.sock.poll(int(timeout * 1000)) else None


def read_key(path):
    """The Z85 key of a `stampede keygen` file (the line that is not a comment)."""
    return [l.strip() for l in open(path) if l.strip() and not l.startswith("#")][0].encode()


# --- protobuf ----------------------------------------------------------------------------------

def varint(v):
    out = bytearray()
    while True:
        b = v & 0x7f
        v >>= 7
        if v:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def field_varint(num, v):
    return varint(num << 3) + varint(v & 0xffffffffffffffff)


def field_bytes(num, data):
    return varint(num << 3 | 2) + varint(len(data)) + data


def field_fixed64(num, v):
    return varint(num << 3 | 1) + struct.pack("<Q", v)


def decode(data):
    """{field number: [values]}: ints for varint and fixed fields, bytes for length-delimited."""
    out, i = {}, 0

    def get_varint():
        nonlocal i
        v, shift = 0, 0
        while True:
            b = data[i]
            i += 1
            v |= (b & 0x7f) << shift
            shift += 7
            if not b & 0x80:
                return v

    while i < len(data):
        key = get_varint()
        num, wt = key >> 3, key & 7
        if wt == 0:
            v = get_varint()
        elif wt == 1:
            v = struct.unpack("<Q", data[i:i + 8])[0]
            i += 8
        elif wt == 5:
            v = struct.unpack("<I", data[i:i + 4])[0]
            i += 4
        elif wt == 2:
            n = get_varint()
            v = data[i:i + n]
            i += n
        else:
            raise ValueError("wire type %d" % wt)
        out.setdefault(num, []).append(v)
    return out


def first(msg, num, default=0):
    return msg.get(num, [default])[0]


# Envelope body fields (proto/stampede.proto)
HELLO, WELCOME, PROBE, ASSIGN, READY, START, BATCH, ACK, HEARTBEAT, STOP, DONE = range(10, 21)


def envelope(body_field, body, run_id=0, seq=0):
    return (field_varint(1, PROTOCOL_VERSION) + field_fixed64(2, run_id) + field_varint(3, seq)
            + field_bytes(body_field, body))


def body_of(env):
    for num in range(HELLO, DONE + 1):
        if num in env:
            return num, decode(env[num][0])
    return None, {}


def rss_kib(pid, key="VmRSS:"):
    """Resident memory of process pid in KiB (key VmHWM: its peak so far)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(key):
                return int(line.split()[1])
    return 0


def memory(pid):
    return "RSS %d KiB, peak %d KiB" % (rss_kib(pid), rss_kib(pid, "VmHWM:"))


def now_ns():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC)


def garbage_messages(count):
    """COUNT messages protobuf-c refuses as an Envelope."""
    shapes = [
        b"\x08",                                    # a varint that never ends
        b"\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff",  # a varint past 10 bytes
        b"\x0f\x01",                                # wire type 7 (none)
        b"\x82\x01\xff\xff\xff\xff\x0f",            # field 16 (batch), length 2^32 - 1 past the end
        b"\x82\x01\x05\x0a\x03",                    # a batch whose record claims 3 bytes of 1
        b"\x11\x01\x02",                            # fixed64 run_id cut short
        b"\x0b",                                    # a start group (deprecated wire type 3)
    ]
    rng = random.Random(7)
    for k in range(count):
        if k < len(shapes):
            yield shapes[k]
        else:  # a known shape with random bytes in front that still fail: field 0 is invalid
            yield b"\x00" + bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))


def batch_with_records(seq, worker_index, n):
    """An EventBatch of n empty records: 2 bytes each on the wire (field 3, length 0)."""
    return field_varint(1, seq) + field_varint(2, worker_index) + b"\x1a\x00" * n


# --- modes -------------------------------------------------------------------------------------

def oversize(argv):
    host, port = argv[0].rsplit(":", 1)
    claim, send = int(argv[1]), int(argv[2])
    timeout = float(argv[3]) if len(argv) > 3 else 10.0
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    print("local port %d" % sock.getsockname()[1], flush=True)
    Zmtp(sock, b"DEALER")
    sent = 0
    try:
        sock.sendall(b"\x02" + struct.pack(">Q", claim))
        block = b"\x00" * 65536
        while sent < send:
            n = min(len(block), send - sent)
            sock.sendall(block[:n])
            sent += n
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if not sock.recv(65536):
                print("closed after %d body bytes" % sent, flush=True)
                return 0
    except (ConnectionError, socket.timeout, OSError) as e:
        if isinstance(e, socket.timeout):
            print("still open after %d body bytes" % sent, flush=True)
            return 1
        print("closed after %d body bytes" % sent, flush=True)
        return 0
    print("still open after %d body bytes" % sent, flush=True)
    return 1


def garbage(argv):
    host, port = argv[0].rsplit(":", 1)
    identity, count = argv[1].encode(), int(argv[2])
    sock = socket.create_connection((host, int(port)), timeout=10)
    print("local port %d" % sock.getsockname()[1], flush=True)
    z = Zmtp(sock, b"DEALER", identity)
    n = 0
    for msg in garbage_messages(count):
        z.send(msg)
        n += 1
    z.recv(1)  # a second for the peer to read them (its PINGs answered)
    print("sent %d undecodable messages" % n, flush=True)
    return 0


def settle(ctl, data, run_id, seconds=1.5):
    """Waits while the peer digests what was sent, answering PINGs and heartbeating."""
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        ctl.send(envelope(HEARTBEAT, field_varint(1, now_ns()) + field_varint(6, 2), run_id))
        ctl.recv(0.1)
        data.recv(0.1)


def beat(ctl, run_id, state, frontier=0, started=0):
    """One worker heartbeat: state (1 assigned, 2 running), and the session frontier and count."""
    body = field_varint(1, now_ns()) + field_varint(6, state)
    if frontier or started:
        body += field_varint(8, frontier) + field_varint(9, started)
    ctl.send(envelope(HEARTBEAT, body, run_id))


def join_run(address, identity, keys=None):
    """Registers as a worker at address (Hello, clock probes, Ready with the assigned concurrency)
    and waits for the Start; returns (ctl, data, run_id, worker_index). keys: (secret key, the
    controller's public key), Z85, for CURVE (CurvePeer); None: plain ZMTP (Zmtp)."""
    host, port = address.rsplit(":", 1)

    def connect(port):
        if keys:
            return CurvePeer("tcp://%s:%d" % (host, port), identity, *keys)
        return Zmtp(socket.create_connection((host, port), timeout=30), b"DEALER", identity)

    ctl = connect(int(port))
    hello = (field_varint(1, PROTOCOL_VERSION) + field_bytes(2, identity) + field_bytes(3, b"hostile")
             + field_varint(4, os.getpid()) + field_varint(5, 0) + field_varint(6, 1)
             + field_varint(7, 1000) + field_bytes(8, b"hostile"))
    ctl.send(envelope(HELLO, hello))
    data = None
    run_id = worker_index = 0
    deadline = time.monotonic() + 120
    last_beat = 0.0
    while time.monotonic() < deadline:
        if data is not None and time.monotonic() - last_beat > 0.2:  # welcomed: alive, idle
            beat(ctl, run_id, 1 if run_id else 0)
            last_beat = time.monotonic()
        msg = ctl.recv(0.2)
        if data is not None:
            data.recv(0)  # answer its PINGs
        if msg is None:
            continue
        env = decode(msg)
        kind, body = body_of(env)
        if kind == WELCOME:
            if not first(body, 1):
                raise SystemExit("refused: %s" % first(body, 2, b"").decode())
            data = connect(first(body, 4))
        elif kind == PROBE:
            t = now_ns()
            reply = (field_varint(1, first(body, 1)) + field_varint(2, first(body, 2))
                     + field_varint(3, t) + field_varint(4, t))
            ctl.send(envelope(PROBE, reply, first(env, 2)))
        elif kind == ASSIGN:
            run_id = first(env, 2)
            worker_index = first(body, 2)
            ctl.send(envelope(READY, field_varint(1, 1) + field_varint(3, first(body, 4)), run_id))
        elif kind == START:
            print("started", flush=True)
            return ctl, data, run_id, worker_index
    raise SystemExit("timed out before the start")


def fake_worker(argv):
    identity, watched = argv[1].encode(), int(argv[2])
    sizes = [int(a) for a in argv[3:]]
    ctl, data, run_id, worker_index = join_run(argv[0], identity)
    time.sleep(0.3)
    for seq, n in enumerate(sizes, 1):
        msg = envelope(BATCH, batch_with_records(seq, worker_index, n), run_id, seq)
        data.send(msg)
        settle(ctl, data, run_id)
        print("sent batch %d of %d records (%d bytes); %s" % (seq, n, len(msg), memory(watched)),
              flush=True)
    data.send(b"\x82\x01\xff\xff\xff\xff\x0f")  # a batch 4 GiB long in 7 bytes
    settle(ctl, data, run_id)
    print("sent garbage", flush=True)
    # finished: no batch of it is to be merged
    ctl.send(envelope(DONE, field_varint(1, 0) + field_varint(2, 0), run_id))
    print("done", flush=True)
    deadline = time.monotonic() + 60
    last_beat = 0.0
    while time.monotonic() < deadline:
        if time.monotonic() - last_beat > 0.5:
            beat(ctl, run_id, 2)
            last_beat = time.monotonic()
        msg = ctl.recv(0.2)
        data.recv(0)
        if msg is not None and body_of(decode(msg))[0] == STOP:
            print("released", flush=True)
            return 0
    print("timed out", flush=True)
    return 1


def sint(v):
    """A protobuf sint64's zigzag encoding."""
    return (v << 1) ^ (v >> 63)


def record(session, request_id, send_ns, end_delta_ns, completion, max_tokens, chunks):
    """A Record of an ok request on endpoint 0 that ended its session: usage with 8 prompt tokens
    and `completion`, max_tokens asked, and `chunks` chunks 1 ms apart."""
    return (field_varint(1, session) + field_varint(5, request_id) + field_varint(6, send_ns)
            + field_varint(11, sint(end_delta_ns)) + field_varint(12, 200) + field_varint(15, 1)
            + field_varint(16, 8) + field_varint(17, completion) + field_varint(19, 8)
            + field_varint(20, max_tokens)
            + field_bytes(21, b"".join(varint(1000) for _ in range(chunks)))
            + field_varint(24, chunks) + field_varint(28, 1))


def lying_worker(argv):
    identity = argv[1].encode()
    keys = (read_key(argv[2]), read_key(argv[3])) if len(argv) > 3 else None
    ctl, data, run_id, worker_index = join_run(argv[0], identity, keys)
    settle(ctl, data, run_id, 1.0)  # into the run, heartbeating (a silent second would be a loss)
    t = now_ns()
    lies = [
        record(worker_index, 1, t, 50000000, 2 ** 31, 16, 16),  # 2^31 output tokens
        record(2 ** 40, 2, t, 50000000, 16, 16, 16),  # a session far past any grant
        record(worker_index, 3, t, 10 ** 15, 16, 16, 16),  # an end 11.6 days after the send
        record(worker_index, 4, t, 50000000, 16, 16, 16),  # honest
    ]
    for seq, rec in enumerate(lies, 1):
        data.send(envelope(BATCH, field_varint(1, seq) + field_varint(2, worker_index)
                           + field_bytes(3, rec), run_id, seq))
    # more sessions started than exist below any grant: a loss would count them as lost
    beat(ctl, run_id, 2, 2 ** 63, 2 ** 64 - 1)
    settle(ctl, data, run_id, 0.5)
    print("lied", flush=True)
    # then silent, as if killed: the controller declares it lost and counts its lost sessions
    time.sleep(30)
    return 0


def fake_controller(argv):
    yaml_text = open(argv[0], "rb").read()
    records = int(argv[1])
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    print("listening on tcp://127.0.0.1:%d" % listener.getsockname()[1], flush=True)
    listener.settimeout(30)
    sock, _ = listener.accept()
    sock.settimeout(30)
    z = Zmtp(sock, b"ROUTER", as_server=True)
    deadline = time.monotonic() + 60
    run_id = 0x5eed
    pid = 0
    ready = None
    while time.monotonic() < deadline:
        msg = z.recv(0.5)
        if msg is None:
            continue
        env = decode(msg)
        kind, body = body_of(env)
        if kind == HELLO and not pid:
            pid = first(body, 4)
            print("worker pid %d; %s" % (pid, memory(pid)), flush=True)
            welcome = (field_varint(1, 1) + field_varint(3, PROTOCOL_VERSION) + field_varint(5, 1000)
                       + field_bytes(8, b"hostile controller"))
            z.send(envelope(WELCOME, welcome))
            for _ in range(2):  # twice: the second must cost no more than the first
                # a body no worker expects, whose records would cost ~250 bytes each to unpack
                z.send(envelope(BATCH, batch_with_records(1, 0, records), run_id))
                z.recv(1.5)
                print("sent a control message of %d records; %s" % (records, memory(pid)),
                      flush=True)
            for g in garbage_messages(3):
                z.send(g)
            print("sent garbage", flush=True)
            assign = (field_bytes(1, yaml_text) + field_varint(2, 0) + field_varint(3, 1)
                      + field_varint(4, 1))
            z.send(envelope(ASSIGN, assign, run_id))
            print("sent the assign", flush=True)
        elif kind == READY and ready is None:
            ready = body
            print("ready ok=%s error=%s" % (bool(first(body, 1)),
                                           first(body, 2, b"").decode(errors="replace")), flush=True)
            print("after the assign: %s" % memory(pid), flush=True)
        elif kind == DONE and ready is not None:
            z.send(envelope(STOP, field_bytes(1, b"released by the hostile controller"), run_id))
            print("released", flush=True)
            # stay until the worker closes (a --once worker exits)
            try:
                while z.recv(1) is not None or time.monotonic() < deadline:
                    pass
            except (ConnectionError, OSError):
                pass
            return 0
    print("timed out", flush=True)
    return 1


def main():
    modes = {"garbage": garbage, "fake-worker": fake_worker, "lying-worker": lying_worker,
             "fake-controller": fake_controller}
    if len(sys.argv) > 1 and sys.argv[1] in modes:
        return modes[sys.argv[1]](sys.argv[2:])
    return oversize(sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
