"""Checks of `stampede mock` over real loopback sockets, in groups (one per test_mock_*.sh):
    python3 mock_checks.py GROUP [TEST...]
Each check starts its own mock, asserts expected values with stated tolerances, and prints
PASS/FAIL; the exit status is 1 when any check failed."""

import json
import os
import re
import selectors
import socket
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from mock_client import MockServer, chat, percentile, request, words  # noqa: E402

MS = 1_000_000
GROUPS = {}


def check(group):
    def register(fn):
        GROUPS.setdefault(group, []).append(fn)
        return fn
    return register


def stream_chat(server, content, **kw):
    c = server.connect()
    try:
        return c.request("POST", "/v1/chat/completions",
                         chat(content, stream=True, stream_options={"include_usage": True}, **kw))
    finally:
        c.close()


def usage_of(r):
    chunks = r.chunks()
    assert chunks and not chunks[-1]["choices"] and "usage" in chunks[-1], \
        f"last chunk is not the usage chunk: {chunks[-1] if chunks else None}"
    return chunks[-1]["usage"]


def metrics(server):
    r = request(server, "GET", "/metrics")
    assert r.status == 200, f"/metrics status {r.status}"
    return r.body.decode()


def metric(text, name, **labels):
    """Value of one series; labels must match exactly those given (plus engine/model_name)."""
    for line in text.splitlines():
        if line.startswith("#") or not line.startswith(name + "{"):
            continue
        series, value = line.rsplit(" ", 1)
        got = dict(kv.split("=", 1) for kv in series[len(name) + 1:-1].split(","))
        got = {k: v.strip('"') for k, v in got.items()}
        if all(got.get(k) == str(v) for k, v in labels.items()):
            return float(value)
    raise AssertionError(f"no series {name} {labels} in /metrics")


def concurrently(fns):
    results = [None] * len(fns)
    errors = []

    def run(i, fn):
        try:
            results[i] = fn()
        except Exception as e:  # surfaced below
            errors.append(e)
    threads = [threading.Thread(target=run, args=(i, fn)) for i, fn in enumerate(fns)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    if errors:
        raise errors[0]
    return results


# ---- fixed mode: the timing truth tests rely on


@check("fixed")
def fixed_mode_ttft_and_itl_within_1ms():
    with MockServer("--ttft-ms", "50", "--itl-ms", "10") as s:
        ttft_err, itl_err, sent_err = [], [], []
        for _ in range(8):
            r = stream_chat(s, words(20), max_tokens=20)
            tokens = r.token_events()
            assert len(tokens) == 20, f"expected 20 token chunks, got {len(tokens)}"
            ttft_err.append(abs((tokens[0][0] - r.sent_ns) / MS - 50))
            for (a, _), (b, _) in zip(tokens, tokens[1:]):
                itl_err.append(abs((b - a) / MS - 10))
            for i, (_, chunk) in enumerate(tokens):
                sent_err.append(abs((chunk["sent_ns"] - r.sent_ns) / MS - (50 + 10 * i)))
        # Measured by a Python client on a shared, noisy 2-core machine where other jobs can
        # hold both cores for milliseconds: the typical error is within 1 ms, and a tail bound
        # catches what a broken schedule would do (a coarse timer, a sleep per token).
        for name, errs in (("TTFT", ttft_err), ("ITL", itl_err), ("sent_ns", sent_err)):
            p50, p90 = percentile(errs, 0.5), percentile(errs, 0.9)
            assert p50 <= 1.0, f"{name} median error {p50:.3f} ms, expected <= 1 ms"
            assert p90 <= 20.0, f"{name} p90 error {p90:.3f} ms, expected <= 20 ms"


@check("fixed")
def fixed_mode_is_load_independent_at_32_streams():
    # One thread drives all 32 streams (selectors). TTFT is taken from the moment each response
    # head arrives (the mock sends it as it accepts the request) to the first token's sent_ns,
    # so the time the mock spends reading the burst of 32 requests is not counted.
    with MockServer("--ttft-ms", "40", "--itl-ms", "5") as s:
        stream_chat(s, "warm up", max_tokens=1)  # a fresh process's first request pays page faults
        conns = []
        for _ in range(32):
            c = s.connect()
            c.sock.setblocking(False)
            conns.append(c)
        time.sleep(0.2)  # accepted: what is measured is 32 concurrent streams, not 32 accepts
        body = json.dumps(chat(words(10), max_tokens=10, stream=True)).encode()
        head = b"POST /v1/chat/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n" % len(body)
        for c in conns:
            c.sock.send(head + body)
        sel = selectors.DefaultSelector()
        for c in conns:
            sel.register(c.sock, selectors.EVENT_READ, c)
        pending, deadline, head_at = set(conns), time.monotonic() + 20, {}
        while pending and time.monotonic() < deadline:
            for key, _ in sel.select(timeout=1):
                c = key.data
                data = c.sock.recv(65536)
                c.buf += data
                if c not in head_at and b"\r\n\r\n" in c.buf:
                    head_at[c] = time.monotonic_ns()
                if not data or c.buf.endswith(b"\r\n0\r\n\r\n"):
                    pending.discard(c)
                    sel.unregister(c.sock)
        assert not pending, f"{len(pending)} of 32 streams did not finish"
        ttfts = []
        for c in conns:
            sents = [int(x) for x in re.findall(rb'"sent_ns":(\d+)', c.buf)]
            assert len(sents) == 11, f"role + 10 tokens, got {len(sents)} chunks"
            ttfts.append((sents[0] - head_at[c]) / MS)
            c.close()
        med = percentile(ttfts, 0.5)
        # A mock whose TTFT grew with load would come out above 40. Below it is this client's own
        # lateness: a loaded machine (ctest -j8) delays the select loop's sight of each head, which
        # shortens head -> sent_ns (38.9 ms seen once in a full run); that side gets 3 ms.
        assert 37.0 <= med <= 41.0, f"median TTFT {med:.3f} ms with 32 streams, expected 40 (-3, +1)"


@check("fixed")
def sent_ns_precedes_receipt_on_the_same_clock():
    with MockServer("--ttft-ms", "5", "--itl-ms", "2") as s:
        r = stream_chat(s, "hello", max_tokens=30)
        lags = []
        for recv, data in r.events:
            if data == "[DONE]":
                continue
            sent = json.loads(data)["sent_ns"]
            assert sent <= recv, f"sent_ns {sent} after the client received it at {recv}"
            lags.append((recv - sent) / MS)
        assert percentile(lags, 0.5) < 1.0, f"median delivery lag {percentile(lags, 0.5)} ms"


@check("fixed")
def a_slow_reader_does_not_delay_other_streams():
    with MockServer("--ttft-ms", "20", "--itl-ms", "0") as s:
        slow = socket.create_connection((s.host, s.port), timeout=10)
        slow.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        body = json.dumps({"prompt": "a", "max_tokens": 20000, "stream": True}).encode()
        slow.sendall(b"POST /v1/completions HTTP/1.1\r\nContent-Length: %d\r\n\r\n%s" % (
            len(body), body))
        time.sleep(0.2)  # its 20,000 chunks are due: most wait in the mock, none are read
        errs = []
        for _ in range(5):
            r = stream_chat(s, words(5), max_tokens=3)
            errs.append(abs((r.token_events()[0][0] - r.sent_ns) / MS - 20))
        slow.close()
        assert percentile(errs, 0.5) <= 1.0, f"TTFT error beside a stalled reader: {errs} ms"


# ---- the engine model


def engine(*extra):
    return ("--tpot-base-ms", "5", "--alpha", "0", "--prefill-tokens-per-s", "0",
            "--ttft-overhead-ms", "0") + extra


@check("engine")
def requests_beyond_max_num_seqs_wait_for_a_slot():
    with MockServer(*engine("--max-num-seqs", "2")) as s:
        rs = concurrently([lambda: stream_chat(s, words(8), max_tokens=30)] * 4)
        # The mock's own send times (sent_ns): each stream's first and last token.
        spans = sorted((r.token_events()[0][1]["sent_ns"], r.token_events()[-1][1]["sent_ns"],
                        r.sent_ns) for r in rs)
        first_two_end = min(end for _, end, _ in spans[:2])
        for start, _, _ in spans[2:]:
            assert start >= first_two_end, \
                f"a queued request's first token ({start}) left before a running one ended " \
                f"({first_two_end})"
        ttft_queued = min((start - sent) / MS for start, _, sent in spans[2:])
        e2e_first = min((end - sent) / MS for _, end, sent in spans[:2])
        assert ttft_queued >= e2e_first - 2.0, \
            f"queued TTFT {ttft_queued:.1f} ms < first E2E {e2e_first:.1f} ms (2 ms for the sends)"
        m = metrics(s)
        queued = metric(m, "vllm:request_queue_time_seconds_sum")
        assert queued >= 2 * 0.140, f"queue time sum {queued:.3f} s, expected >= 2 x 30 steps of 5 ms"


@check("engine")
def step_time_grows_as_running_to_the_alpha():
    args = ("--tpot-base-ms", "4", "--alpha", "0.5", "--prefill-tokens-per-s", "0",
            "--ttft-overhead-ms", "0")
    with MockServer(*args) as s:
        def tpot(r):
            t = r.token_events()
            return (t[-1][1]["sent_ns"] - t[0][1]["sent_ns"]) / MS / (len(t) - 1)
        alone = tpot(stream_chat(s, words(8), max_tokens=40))
        batch = concurrently([lambda: stream_chat(s, words(8), max_tokens=40)] * 9)
        crowded = percentile([tpot(r) for r in batch], 0.5)
        assert abs(alone - 4.0) <= 0.4, f"TPOT alone {alone:.2f} ms, expected 4 +- 10 %"
        assert abs(crowded - 12.0) <= 1.8, f"TPOT with 9 running {crowded:.2f} ms, expected " \
            f"4 x 9^0.5 = 12 +- 15 %"


@check("engine")
def second_identical_prompt_hits_the_prefix_cache():
    with MockServer(*engine("--prefill-tokens-per-s", "4000")) as s:
        prompt = words(1000)
        first = stream_chat(s, prompt, max_tokens=4)
        second = stream_chat(s, prompt, max_tokens=4)
        u1, u2 = usage_of(first), usage_of(second)
        assert u1["prompt_tokens_details"]["cached_tokens"] == 0, u1
        assert u2["prompt_tokens_details"]["cached_tokens"] == 992, \
            f"expected 992 cached tokens (62 full blocks of 16, the last token recomputed): {u2}"
        t1 = (first.token_events()[0][0] - first.sent_ns) / MS
        t2 = (second.token_events()[0][0] - second.sent_ns) / MS
        assert t1 >= 250 - 5, f"uncached TTFT {t1:.1f} ms, expected 1000 tokens / 4000 per s + step"
        assert t2 <= t1 / 4, f"cached TTFT {t2:.1f} ms not well below uncached {t1:.1f} ms"
        m = metrics(s)
        assert metric(m, "vllm:prefix_cache_queries_total") == 2000
        assert metric(m, "vllm:prefix_cache_hits_total") == 992


@check("engine")
def prefix_cache_off_reports_no_hits():
    with MockServer(*engine("--no-prefix-cache")) as s:
        prompt = words(200)
        stream_chat(s, prompt, max_tokens=2)
        u = usage_of(stream_chat(s, prompt, max_tokens=2))
        assert u["prompt_tokens_details"]["cached_tokens"] == 0, u


@check("engine")
def multi_turn_history_reuses_the_previous_reply():
    with MockServer(*engine()) as s:
        c = s.connect()
        msgs = [{"role": "user", "content": words(100)}]
        r = c.request("POST", "/v1/chat/completions", {"messages": msgs, "max_tokens": 40})
        reply = r.json()["choices"][0]["message"]["content"]
        msgs += [{"role": "assistant", "content": reply}, {"role": "user", "content": words(30)}]
        r2 = c.request("POST", "/v1/chat/completions", {"messages": msgs, "max_tokens": 5})
        cached = r2.json()["usage"]["prompt_tokens_details"]["cached_tokens"]
        c.close()
        # prompt 100 + reply 40 = 140 tokens are cached as 8 full blocks: 128 tokens.
        assert cached == 128, f"expected the 128 tokens of full blocks of turn 1, got {cached}"


@check("engine")
def clients_leaving_mid_step_abort_and_free_their_slots():
    with MockServer(*engine("--max-num-seqs", "4", "--tpot-base-ms", "20")) as s:
        conns = []
        for _ in range(8):  # 4 running, 4 waiting; all leave while steps are in flight
            c = s.connect()
            c.send("POST", "/v1/completions", {"prompt": words(50), "max_tokens": 500,
                                               "stream": True})
            conns.append(c)
        time.sleep(0.15)
        for c in conns:
            c.close()
        time.sleep(0.1)
        m = metrics(s)
        assert metric(m, "vllm:request_success_total", finished_reason="abort") == 8
        assert metric(m, "vllm:num_requests_running") == 0
        assert metric(m, "vllm:num_requests_waiting") == 0
        assert metric(m, "vllm:kv_cache_usage_perc") == 0
        r = stream_chat(s, words(5), max_tokens=3)
        assert r.status == 200 and len(r.token_events()) == 3


@check("engine")
def too_long_is_refused_with_vllms_400():
    with MockServer("--max-model-len", "100") as s:
        r = request(s, "POST", "/v1/chat/completions", chat(words(60), max_tokens=50))
        assert r.status == 400, r.status
        message = ("This model's maximum context length is 100 tokens. However, you requested "
                   "110 tokens (60 in the messages, 50 in the completion). Please reduce the "
                   "length of the messages or completion.")
        assert r.json() == {"error": {"message": message, "type": "BadRequestError",
                                      "param": None, "code": 400}}, r.body
        r = request(s, "POST", "/v1/completions", {"prompt": words(100)})
        assert r.status == 400, r.body
        assert "maximum context length is 100" in r.json()["error"]["message"], r.body
    with MockServer("--max-model-len", "100", "--flat-errors") as s:
        r = request(s, "POST", "/v1/chat/completions", chat(words(60), max_tokens=50))
        assert r.status == 400 and r.json() == {"object": "error", "message": message,
                                                "type": "BadRequestError", "param": None,
                                                "code": 400}, r.body


@check("engine")
def profiles_start_and_answer():
    for profile in ("tp1-fp8", "tp2-fp8", "tp2-fp16", "h200-llama70b", "default"):
        with MockServer("--profile", profile) as s:
            r = stream_chat(s, words(50), max_tokens=3)
            assert r.status == 200 and len(r.token_events()) == 3, (profile, r.status)


# ---- HTTP behaviour and response shapes


@check("http")
def streamed_chat_chunks_follow_vllms_format():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        r = stream_chat(s, words(12), max_tokens=4)
        assert r.status == 200 and r.headers["content-type"].startswith("text/event-stream")
        assert r.events[-1][1] == "[DONE]", r.events[-1]
        chunks = r.chunks()
        assert len(chunks) == 6, f"role + 4 tokens + usage, got {len(chunks)}"
        ids = {c["id"] for c in chunks}
        assert len(ids) == 1 and ids.pop().startswith("chatcmpl-")
        for c in chunks:
            assert c["object"] == "chat.completion.chunk" and c["model"] == "mock-llama"
            assert isinstance(c["created"], int) and isinstance(c["sent_ns"], int)
        assert chunks[0]["choices"] == [{"index": 0, "delta": {"role": "assistant", "content": ""},
                                         "logprobs": None, "finish_reason": None}]
        for c in chunks[1:4]:
            assert c["choices"][0]["finish_reason"] is None and c["choices"][0]["delta"]["content"]
        last = chunks[4]["choices"][0]
        assert last["finish_reason"] == "length" and last["stop_reason"] is None, last
        assert chunks[5]["choices"] == [] and chunks[5]["usage"] == {
            "prompt_tokens": 12, "completion_tokens": 4, "total_tokens": 16,
            "prompt_tokens_details": {"cached_tokens": 0}}, chunks[5]
        text = "".join(c["choices"][0]["delta"]["content"] for c in chunks[1:5])
        assert len(text.split()) == 4, text


@check("http")
def streamed_completions_use_text_and_no_role_chunk():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        r = request(s, "POST", "/v1/completions",
                    {"prompt": "one two three", "max_tokens": 3, "stream": True})
        chunks = r.chunks()
        assert len(chunks) == 3, f"3 token chunks and no usage chunk, got {len(chunks)}"
        for c in chunks:
            assert c["object"] == "text_completion" and c["id"].startswith("cmpl-")
            assert set(c["choices"][0]) == {"index", "text", "logprobs", "finish_reason",
                                            "stop_reason"}, c
        assert chunks[-1]["choices"][0]["finish_reason"] == "length"


@check("http")
def non_streaming_responses_have_openai_shape():
    with MockServer("--ttft-ms", "2", "--itl-ms", "1") as s:
        r = request(s, "POST", "/v1/chat/completions", chat(words(7), max_tokens=5))
        assert r.status == 200 and r.headers["content-type"] == "application/json"
        body = r.json()
        assert body["object"] == "chat.completion" and body["id"].startswith("chatcmpl-")
        choice = body["choices"][0]
        assert choice["message"]["role"] == "assistant"
        assert len(choice["message"]["content"].split()) == 5, choice
        assert choice["finish_reason"] == "length"
        assert body["usage"] == {"prompt_tokens": 7, "completion_tokens": 5, "total_tokens": 12,
                                 "prompt_tokens_details": {"cached_tokens": 0}}, body["usage"]
        r = request(s, "POST", "/v1/completions", {"prompt": "a b c", "max_tokens": 2})
        body = r.json()
        assert body["object"] == "text_completion" and len(body["choices"][0]["text"].split()) == 2
        assert (body["usage"]["prompt_tokens"], body["usage"]["completion_tokens"]) == (3, 2)


@check("http")
def same_request_gets_the_same_reply():
    with MockServer("--ttft-ms", "1", "--itl-ms", "0") as s:
        a = request(s, "POST", "/v1/completions", {"prompt": words(30), "max_tokens": 20}).json()
        b = request(s, "POST", "/v1/completions", {"prompt": words(30), "max_tokens": 20}).json()
        c = request(s, "POST", "/v1/completions", {"prompt": words(31), "max_tokens": 20}).json()
        assert a["choices"][0]["text"] == b["choices"][0]["text"]
        assert a["choices"][0]["text"] != c["choices"][0]["text"]


@check("http")
def keep_alive_serves_several_requests_on_one_connection():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        c = s.connect()
        statuses = []
        for i in range(3):
            r = c.request("POST", "/v1/chat/completions",
                          chat(words(5), max_tokens=3, stream=bool(i % 2)))
            statuses.append(r.status)
            statuses.append(c.request("GET", "/health").status)
        statuses.append(c.request("GET", "/v1/models").status)
        c.close()
        assert statuses == [200] * 7, statuses
        assert metric(metrics(s), "stampede_mock_connections_accepted_total") == 2.0


@check("http")
def pipelined_requests_are_answered_in_order():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        c = s.connect()
        reqs = b""
        for n in (3, 1, 2):
            body = json.dumps({"prompt": "x", "max_tokens": n, "stream": True}).encode()
            reqs += b"POST /v1/completions HTTP/1.1\r\nHost: m\r\nContent-Length: %d\r\n\r\n%s" % (
                len(body), body)
        reqs += b"GET /nope HTTP/1.1\r\nHost: m\r\n\r\n"
        c.send_raw(reqs)
        counts = [len(c.read_response().chunks()) for _ in range(3)]
        assert counts == [3, 1, 2], counts
        assert c.read_response().status == 404
        c.close()


@check("http")
def malformed_requests_get_400_with_a_json_error():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        cases = [b'{"messages": [', b'[1, 2]', b'{"messages": []}',
                 b'{"messages": [{"role": "user", "content": "x"}], "max_tokens": -3}',
                 b'{"messages": [{"role": "user", "content": "x"}], "stream": "yes"}']
        for body in cases:
            r = request(s, "POST", "/v1/chat/completions", body)
            assert r.status == 400, (body, r.status)
            err = r.json()["error"]
            assert err["type"] == "BadRequestError" and err["code"] == 400 and err["message"], err
        r = request(s, "POST", "/v1/completions", b'{"max_tokens": 3}')
        assert r.status == 400 and "'prompt' is required" in r.json()["error"]["message"], r.body


@check("http")
def http_errors_404_405_411_413_and_bad_request_line():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1", "--max-body-bytes", "100") as s:
        assert request(s, "GET", "/v1/nothing").status == 404
        r = request(s, "GET", "/v1/chat/completions")
        assert r.status == 405 and r.headers.get("allow") == "POST", (r.status, r.headers)
        assert request(s, "POST", "/metrics", b"{}").status == 405
        assert request(s, "POST", "/v1/completions", b"x" * 101).status == 413
        for raw, want in ((b"POST /v1/completions HTTP/1.1\r\nHost: m\r\n\r\n", 411),
                          (b"BLAH\r\n\r\n", 400),
                          (b"GET /health HTTP/2.0\r\n\r\n", 505),
                          (b"POST /v1/completions HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
                           501)):
            c = s.connect()
            c.send_raw(raw)
            r = c.read_response()
            assert r.status == want, (raw, r.status, want)
            assert r.headers.get("connection") == "close", r.headers
            c.close()
        r = request(s, "HEAD", "/metrics")
        assert r.status == 200 and int(r.headers["content-length"]) > 0


@check("http")
def a_chunked_request_body_is_served():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        body = json.dumps({"prompt": "a b c", "max_tokens": 2, "stream": False}).encode()
        framed = b"".join(b"%x\r\n%s\r\n" % (len(body[i:i + 7]), body[i:i + 7])
                          for i in range(0, len(body), 7)) + b"0\r\n\r\n"
        c = s.connect()
        for _ in range(2):  # the connection goes on after a chunked request
            c.send_raw(b"POST /v1/completions HTTP/1.1\r\nHost: m\r\n"
                       b"Transfer-Encoding: chunked\r\n\r\n" + framed)
            r = c.read_response()
            assert r.status == 200, (r.status, r.body)
            assert r.json()["usage"]["completion_tokens"] == 2, r.body
        c.close()


@check("http")
def expect_100_continue_is_answered():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        c = s.connect()
        body = json.dumps({"prompt": words(300), "max_tokens": 2}).encode()
        c.send_raw(b"POST /v1/completions HTTP/1.1\r\nHost: m\r\nExpect: 100-continue\r\n"
                   b"Content-Length: %d\r\n\r\n" % len(body))
        assert c.read_response().status == 100
        c.send_raw(body)
        assert c.read_response().status == 200
        c.close()


@check("http")
def http_1_0_stream_ends_with_the_connection():
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        c = s.connect()
        body = json.dumps({"prompt": "a", "max_tokens": 3, "stream": True}).encode()
        c.send_raw(b"POST /v1/completions HTTP/1.0\r\nContent-Length: %d\r\n\r\n%s" % (
            len(body), body))
        r = c.read_response()
        assert r.status == 200 and "transfer-encoding" not in r.headers, r.headers
        assert [d for _, d in r.events][-1] == "[DONE]" and len(r.chunks()) == 3
        c.close()


@check("http")
def client_going_away_mid_stream_is_an_abort():
    with MockServer("--ttft-ms", "1", "--itl-ms", "20") as s:
        c = s.connect()
        c.send("POST", "/v1/completions", {"prompt": "a", "max_tokens": 100, "stream": True})
        c.read_response(head_only=True)
        time.sleep(0.1)
        c.close()
        time.sleep(0.1)
        m = metrics(s)
        assert metric(m, "vllm:request_success_total", finished_reason="abort") == 1
        assert metric(m, "vllm:num_requests_running") == 0


# ---- /metrics


def promtool_problems(text):
    p = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True,
                       text=True, timeout=30)
    lines = [ln for ln in (p.stdout + p.stderr).splitlines() if ln.strip()]
    # vLLM's own names contain ':', which promtool's linter flags (exit 3) though they parse;
    # anything else (a parse error is exit 1) is a real problem.
    real = [ln for ln in lines if "metric names should not contain ':'" not in ln]
    return p.returncode, real


@check("metrics")
def metrics_pass_promtool():
    with MockServer(*engine()) as s:
        stream_chat(s, words(40), max_tokens=5)
        rc, problems = promtool_problems(metrics(s))
        assert rc in (0, 3) and not problems, f"promtool rc {rc}: {problems}"
    with MockServer("--ttft-ms", "1", "--itl-ms", "1") as s:
        rc, problems = promtool_problems(metrics(s))
        assert rc in (0, 3) and not problems, f"promtool rc {rc}: {problems}"


@check("metrics")
def metrics_counters_match_the_requests_sent():
    with MockServer(*engine("--model", "m-test")) as s:
        sizes = [(10, 3), (25, 7), (40, 1), (5, 12)]
        for prompt, out in sizes:
            assert stream_chat(s, words(prompt, prompt), max_tokens=out).status == 200
        request(s, "POST", "/v1/completions", {"prompt": words(9), "max_tokens": 4})
        m = metrics(s)
        n = len(sizes) + 1
        prompt_total = sum(p for p, _ in sizes) + 9
        gen_total = sum(o for _, o in sizes) + 4
        want = {
            ("vllm:prompt_tokens_total", ()): prompt_total,
            ("vllm:generation_tokens_total", ()): gen_total,
            ("vllm:request_success_total", (("finished_reason", "length"),)): n,
            ("vllm:request_success_total", (("finished_reason", "abort"),)): 0,
            ("vllm:time_to_first_token_seconds_count", ()): n,
            ("vllm:e2e_request_latency_seconds_count", ()): n,
            ("vllm:inter_token_latency_seconds_count", ()): gen_total - n,
            ("vllm:request_prompt_tokens_sum", ()): prompt_total,
            ("stampede_mock_chunks_sent_total", ()): gen_total - 4,
            ("stampede_mock_emission_error_seconds_count", ()): gen_total - 4,
            ("vllm:num_requests_running", ()): 0,
            ("vllm:num_requests_waiting", ()): 0,
            ("vllm:kv_cache_usage_perc", ()): 0,
        }
        for (name, labels), value in want.items():
            got = metric(m, name, model_name="m-test", **dict(labels))
            assert got == value, f"{name}{dict(labels)} = {got}, expected {value}"
        assert 'vllm:time_to_first_token_seconds_bucket{engine="0",le="0.001",' \
               'model_name="m-test"}' in m, "vLLM's TTFT bucket layout"


# ---- reply lengths, reasoning, faults, options


@check("faults")
def output_len_min_tokens_and_ignore_eos():
    with MockServer("--ttft-ms", "0", "--itl-ms", "0", "--output-len", "7", "--early-eos") as s:
        def run(**kw):
            body = request(s, "POST", "/v1/completions", {"prompt": "a b", **kw}).json()
            return body["usage"]["completion_tokens"], body["choices"][0]["finish_reason"]
        assert run() == (7, "stop")
        assert run(max_tokens=5) == (5, "length")
        assert run(max_tokens=50) == (7, "stop")
        assert run(max_tokens=50, ignore_eos=True) == (50, "length")
        assert run(max_tokens=50, min_tokens=20) == (20, "stop")
    with MockServer("--ttft-ms", "0", "--itl-ms", "0", "--output-len", "7") as s:
        body = request(s, "POST", "/v1/completions", {"prompt": "a", "max_tokens": 30}).json()
        assert body["usage"]["completion_tokens"] == 30, "max_tokens is exact without --early-eos"


@check("faults")
def reasoning_tokens_stream_before_the_content():
    with MockServer("--ttft-ms", "0", "--itl-ms", "0", "--reasoning-tokens", "3") as s:
        r = stream_chat(s, "why", max_tokens=5)
        deltas = [c["choices"][0]["delta"] for c in r.chunks()[1:-1]]
        kinds = ["reasoning_content" if "reasoning_content" in d else "content" for d in deltas]
        assert kinds == ["reasoning_content"] * 3 + ["content"] * 2, kinds
        assert usage_of(r)["completion_tokens"] == 5


@check("faults")
def fail_rate_answers_with_the_configured_status():
    with MockServer("--ttft-ms", "0", "--itl-ms", "0", "--fail-rate", "1", "--fail-status",
                    "503") as s:
        r = request(s, "POST", "/v1/chat/completions", chat("x", max_tokens=2))
        assert r.status == 503 and r.json()["error"]["code"] == 503, (r.status, r.body)
        assert metric(metrics(s), "stampede_mock_faults_injected_total", kind="fail") == 1


@check("faults")
def reset_after_tokens_cuts_the_stream():
    # ITL 0: all 10 tokens are due at once, and still only 3 may leave before the reset.
    with MockServer("--ttft-ms", "1", "--itl-ms", "0", "--reset-after-tokens", "3") as s:
        c = s.connect()
        c.send("POST", "/v1/completions", {"prompt": "a", "max_tokens": 10, "stream": True})
        try:
            r = c.read_response()
            raise AssertionError(f"stream completed ({len(r.chunks())} chunks), expected a reset")
        except (EOFError, ConnectionResetError):
            pass
        assert c.buf.count(b"data:") <= 3, c.buf
        c.close()


@check("faults")
def stall_pauses_the_stream():
    with MockServer("--ttft-ms", "1", "--itl-ms", "2", "--stall-ms", "200",
                    "--stall-after-tokens", "2") as s:
        t = stream_chat(s, "a", max_tokens=4).token_events()
        gaps = [(b[0] - a[0]) / MS for a, b in zip(t, t[1:])]
        assert gaps[1] >= 195 and gaps[0] < 100 and gaps[2] < 100, gaps
    with MockServer(*engine("--stall-ms", "200", "--stall-after-tokens", "2")) as s:
        t = stream_chat(s, "a", max_tokens=4).token_events()
        gaps = [(b[0] - a[0]) / MS for a, b in zip(t, t[1:])]
        assert gaps[1] >= 190, gaps


@check("faults")
def malformed_rate_breaks_one_chunk():
    with MockServer("--ttft-ms", "0", "--itl-ms", "0", "--malformed-rate", "1") as s:
        r = request(s, "POST", "/v1/completions", {"prompt": "a", "max_tokens": 4, "stream": True})
        bad = 0
        for _, data in r.events:
            try:
                json.loads(data) if data != "[DONE]" else None
            except json.JSONDecodeError:
                bad += 1
        assert bad == 1, f"expected exactly one broken chunk, got {bad}"


@check("faults")
def bad_options_exit_2_naming_the_flag():
    binary = os.environ["STAMPEDE"]
    for args, needle in ((["--itl-ms", "abc"], "--itl-ms"), (["--bogus"], "--bogus"),
                         (["--profile", "nope"], "tp1-fp8"), (["--port"], "--port"),
                         (["--output-len", "lognormal:mean=3"], "--output-len"),
                         (["--profile", "tp1-fp8", "--itl-ms", "5"], "exclude")):
        p = subprocess.run([binary, "mock", *args], capture_output=True, text=True, timeout=10)
        assert p.returncode == 2 and needle in p.stderr, (args, p.returncode, p.stderr)
    p = subprocess.run([binary, "mock", "--help"], capture_output=True, text=True, timeout=10)
    assert p.returncode == 0 and "--reset-after-tokens" in p.stdout and "h200-llama70b" in p.stdout


def main():
    group = sys.argv[1]
    only = set(sys.argv[2:])
    failed = 0
    for fn in GROUPS[group]:
        if only and fn.__name__ not in only:
            continue
        t0 = time.monotonic()
        try:
            fn()
            print(f"PASS {fn.__name__} ({time.monotonic() - t0:.2f} s)", flush=True)
        except Exception:
            failed += 1
            print(f"FAIL {fn.__name__}", flush=True)
            traceback.print_exc()
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
