#!/usr/bin/env python3
"""A hostile ZeroMQ peer for the tests: speaks ZMTP 3.0 with the NULL mechanism as a DEALER over a
raw socket (no pyzmq needed), completes the handshake, then sends one message frame whose header
claims CLAIM bytes followed by SEND bytes of body, and reports when the peer closes the connection.

usage: hostile_peer.py HOST:PORT CLAIM SEND [TIMEOUT_S]
prints "local port P", then "closed after B body bytes" or "still open after B body bytes"."""
import socket
import struct
import sys
import time


def recv_exact(sock, n):
    data = b""
    while len(data) < n:
        chunk = sock.recv(n - len(data))
        if not chunk:
            raise ConnectionError("closed during the handshake")
        data += chunk
    return data


def greeting():
    return (b"\xff" + b"\x00" * 7 + b"\x01" + b"\x7f" + bytes([3, 0]) + b"NULL".ljust(20, b"\x00")
            + b"\x00" + b"\x00" * 31)


def ready_command():
    name = b"Socket-Type"
    body = b"\x05READY" + bytes([len(name)]) + name + struct.pack(">I", 6) + b"DEALER"
    return bytes([0x04, len(body)]) + body


def read_frame(sock):
    flags = recv_exact(sock, 1)[0]
    size = struct.unpack(">Q", recv_exact(sock, 8))[0] if flags & 0x02 else recv_exact(sock, 1)[0]
    return flags, recv_exact(sock, size)


def main():
    host, port = sys.argv[1].rsplit(":", 1)
    claim, send = int(sys.argv[2]), int(sys.argv[3])
    timeout = float(sys.argv[4]) if len(sys.argv) > 4 else 10.0
    sock = socket.create_connection((host, int(port)), timeout=timeout)
    print("local port %d" % sock.getsockname()[1], flush=True)
    sock.sendall(greeting())
    recv_exact(sock, 64)
    sock.sendall(ready_command())
    flags, body = read_frame(sock)
    assert flags & 0x04 and body.startswith(b"\x05READY"), "no READY from the peer"
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


if __name__ == "__main__":
    sys.exit(main())
