#!/usr/bin/env python3
"""An inference server with a known truth, for the measurement tests: OpenAI chat completions, or
the same logical stream as Anthropic Messages or OpenAI Responses events (--api).

Each POST streams --tokens tokens, produced on a true per-token gap (token i is ready at
t0 + i * gap, t0 being when the headers went out), but written several SSE events per send():
the group sizes cycle through --groups (e.g. "2,3": 2 events in one send, then 3, then 2...), a
group leaving when its last token is ready. A chat stream has no usage block (unless --usage),
then [DONE]. So a client that keeps one ITL sample per event sees gaps of 0 and of k * gap; the
truth is `gap` for every token.

  --api A               chat (default), messages or responses: each token is the API's delta
                        event; the API's own events open and close the reply (message_start,
                        content_block_start/stop, message_delta with usage, message_stop;
                        response.created, output_item.added/done, response.completed with usage)
  --words-per-event W   every event carries W words ("several tokens in one event")
  --reasoning R         the first R tokens are reasoning (reasoning_content, thinking_delta,
                        response.reasoning_text.delta), the rest answer text
  --tool T              the last T tokens are a tool call's arguments (tool_calls,
                        input_json_delta, response.function_call_arguments.delta)
  --ping                a ping event (Messages' ping; an SSE comment otherwise) written alone
                        halfway through every gap: no token
  --usage               chat: a usage chunk before [DONE] (the other APIs always carry usage);
                        usage says --prompt-tokens, of which --cached-tokens cached, and the
                        tokens sent
  --error-after K       after K tokens, a mid-stream error (event: error; Responses:
                        response.failed) and the end of the body
  --status S            answer the first --fail-first N POSTs (all when 0) with HTTP S and the
                        API's error body (Anthropic's overloaded_error shape for --api messages),
                        Retry-After: 0
  --header-delay-ms D   wait D ms after reading the request before sending the headers
  --close               answer with Connection: close (a new connection per request)
  --replica-header H    name the replica that answered in response header H: replica "r0" or
                        "r1" by the request's X-Session-ID (or --session-header) value, except
                        that session --move-session S moves to the other replica from its second
                        request on
  --log FILE            one JSON line per POST: the session header's value, the number of
                        messages (or input items) in the body, its previous_response_id and the
                        id of the response it got (Responses ids are resp_truth_N, N the POST's
                        number)

GET /stats answers {"requests": n, "connections": distinct connections that sent a POST}.
GET /metrics is not counted: a 404, as a server without Prometheus metrics answers (the default
server_metrics: auto asks for it), or with --metrics-html a 200 HTML page that is no /metrics.
Prints "listening on 127.0.0.1:PORT" once it accepts; SIGTERM ends it.
"""
import argparse
import json
import threading
import time

from sse_test_server import (DONE_AND_END, NOT_FOUND, SSE_HEADERS, chunk, completion_chunk,
                             each_request, json_response, named_event, serve_forever, sse_event)


class ChatShape:
    """The reply as chat.completion.chunk events."""

    def __init__(self, a, number=0):
        self.a = a

    def prelude(self):
        return b""

    def switch(self, kind):
        return b""

    def token(self, i, kind, words, last):
        if kind == "tool":
            call = {"index": 0, "function": {"arguments": words}}
            if i == self.a.tokens - self.a.tool:
                call.update(id="call_1", type="function")
                call["function"]["name"] = "get_weather"
            delta = {"tool_calls": [call]}
        else:
            delta = {"reasoning_content" if kind == "reasoning" else "content": words}
        finish = ("tool_calls" if kind == "tool" else "length") if last else None
        return completion_chunk("chatcmpl-truth", "truth", delta, finish)

    def trailer(self, kind, output):
        usage = b""
        if self.a.usage:
            usage = sse_event({"id": "chatcmpl-truth", "object": "chat.completion.chunk",
                               "choices": [], "usage": {
                                   "prompt_tokens": self.a.prompt_tokens,
                                   "completion_tokens": output,
                                   "prompt_tokens_details": {"cached_tokens": self.a.cached_tokens}}})
        return usage + DONE_AND_END

    def ping(self):
        return chunk(": keep-alive\n\n")

    def error(self):
        return chunk('event: error\ndata: {"error":{"message":"engine error","code":500}}\n\n')

    def error_body(self, status):
        return {"error": {"message": "Overloaded", "type": "overloaded", "code": status}}


class MessagesShape:
    """The reply as Anthropic Messages events: a thinking block, a text block, a tool_use block."""
    BLOCKS = {"reasoning": {"type": "thinking", "thinking": ""}, "content": {"type": "text", "text": ""},
              "tool": {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {}}}
    DELTAS = {"reasoning": ("thinking_delta", "thinking"), "content": ("text_delta", "text"),
              "tool": ("input_json_delta", "partial_json")}

    def __init__(self, a, number=0):
        self.a = a
        self.index = -1

    def prelude(self):
        usage = {"input_tokens": self.a.prompt_tokens - self.a.cached_tokens,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": self.a.cached_tokens,
                 "output_tokens": 1}
        return (named_event("message_start", {"type": "message_start", "message": {
            "id": "msg_truth", "type": "message", "role": "assistant", "model": "truth",
            "content": [], "stop_reason": None, "stop_sequence": None, "usage": usage}})
            + named_event("ping", {"type": "ping"}))

    def switch(self, kind):
        out = b""
        if self.index >= 0:
            out += named_event("content_block_stop", {"type": "content_block_stop", "index": self.index})
        self.index += 1
        out += named_event("content_block_start", {"type": "content_block_start", "index": self.index,
                                                   "content_block": self.BLOCKS[kind]})
        if kind == "tool":  # Anthropic opens a tool's input with an empty delta: no token
            out += self.delta("tool", "")
        return out

    def delta(self, kind, words):
        kind_name, key = self.DELTAS[kind]
        return named_event("content_block_delta", {"type": "content_block_delta", "index": self.index,
                                                   "delta": {"type": kind_name, key: words}})

    def token(self, i, kind, words, last):
        return self.delta(kind, words)

    def trailer(self, kind, output):
        return (named_event("content_block_stop", {"type": "content_block_stop", "index": self.index})
                + named_event("message_delta", {"type": "message_delta", "delta": {
                    "stop_reason": "tool_use" if kind == "tool" else "max_tokens",
                    "stop_sequence": None}, "usage": {"output_tokens": output}})
                + named_event("message_stop", {"type": "message_stop"}) + b"0\r\n\r\n")

    def ping(self):
        return named_event("ping", {"type": "ping"})

    def error(self):
        return named_event("error", {"type": "error", "error": {"type": "overloaded_error",
                                                                "message": "Overloaded"}})

    def error_body(self, status):
        return {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}


class ResponsesShape:
    """The reply as OpenAI Responses events: a reasoning item, a message item, a function call."""
    ITEMS = {"reasoning": {"type": "reasoning", "id": "rs_1", "summary": []},
             "content": {"type": "message", "id": "msg_1", "role": "assistant", "status": "in_progress",
                         "content": []},
             "tool": {"type": "function_call", "id": "fc_1", "call_id": "call_1", "name": "get_weather",
                      "arguments": "", "status": "in_progress"}}
    DELTAS = {"reasoning": "response.reasoning_text.delta", "content": "response.output_text.delta",
              "tool": "response.function_call_arguments.delta"}

    def __init__(self, a, number=0):
        self.a = a
        self.seq = 0
        self.kinds = []
        self.id = "resp_truth_%d" % number

    def event(self, obj):
        obj["sequence_number"] = self.seq
        self.seq += 1
        return named_event(obj["type"], obj)

    def response(self, status, usage=None, **extra):
        r = {"id": self.id, "object": "response", "model": "truth", "status": status,
             "error": None, "incomplete_details": None, "usage": usage,
             "output": [{"type": self.ITEMS[k]["type"]} for k in self.kinds]}
        r.update(extra)
        return r

    def prelude(self):
        return (self.event({"type": "response.created", "response": self.response("in_progress")})
                + self.event({"type": "response.in_progress", "response": self.response("in_progress")}))

    def switch(self, kind):
        out = b""
        if self.kinds:
            out += self.event({"type": "response.output_item.done", "output_index": len(self.kinds) - 1,
                               "item": self.ITEMS[self.kinds[-1]]})
        self.kinds.append(kind)
        out += self.event({"type": "response.output_item.added", "output_index": len(self.kinds) - 1,
                           "item": self.ITEMS[kind]})
        if kind == "content":
            out += self.event({"type": "response.content_part.added", "item_id": "msg_1",
                               "output_index": len(self.kinds) - 1, "content_index": 0,
                               "part": {"type": "output_text", "text": "", "annotations": []}})
        return out

    def token(self, i, kind, words, last):
        return self.event({"type": self.DELTAS[kind], "item_id": self.ITEMS[kind]["id"],
                           "output_index": len(self.kinds) - 1, "content_index": 0, "delta": words})

    def trailer(self, kind, output):
        usage = {"input_tokens": self.a.prompt_tokens,
                 "input_tokens_details": {"cached_tokens": self.a.cached_tokens},
                 "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
                 "total_tokens": self.a.prompt_tokens + output}
        return (self.event({"type": "response.output_item.done", "output_index": len(self.kinds) - 1,
                            "item": self.ITEMS[kind]})
                + self.event({"type": "response.completed", "response": self.response("completed", usage)})
                + b"0\r\n\r\n")

    def ping(self):
        return chunk(": keep-alive\n\n")

    def error(self):
        return self.event({"type": "response.failed", "response": self.response(
            "failed", error={"code": "server_error", "message": "engine error"})})

    def error_body(self, status):
        return {"error": {"message": "Overloaded", "type": "server_error", "code": str(status)}}


SHAPES = {"chat": ChatShape, "messages": MessagesShape, "responses": ResponsesShape}


class Server:
    def __init__(self, args):
        self.args = args
        self.groups = [int(g) for g in args.groups.split(",")]
        self.lock = threading.Lock()
        self.requests = 0
        self.connections = 0
        self.sessions = {}  # session header value -> requests seen
        self.log = open(args.log, "a") if args.log else None

    def serve(self, conn):
        counted = False
        headers = {}
        try:
            for request_line, body in each_request(conn, headers):
                if request_line.startswith("GET /metrics"):
                    conn.sendall(self.metrics_answer())
                    return
                if request_line.startswith("GET /stats"):
                    with self.lock:
                        stats = {"requests": self.requests, "connections": self.connections}
                    conn.sendall(json_response(stats))
                    return
                if not request_line.startswith("POST"):
                    conn.sendall(NOT_FOUND)
                    return
                with self.lock:
                    self.requests += 1
                    number = self.requests
                    if not counted:
                        self.connections += 1
                        counted = True
                    replica = self.note(headers, body, number)
                if self.args.status and (not self.args.fail_first or number <= self.args.fail_first):
                    conn.sendall(self.failure())
                else:
                    self.stream(conn, replica, number)
                if self.args.close:
                    return
        except OSError:
            pass
        finally:
            conn.close()

    def note(self, headers, body, number):
        """Logs the request's session header; returns the replica answering it, or None."""
        a = self.args
        sid = headers.get(a.session_header.lower())
        seen = self.sessions.get(sid, 0)
        self.sessions[sid] = seen + 1
        if self.log:
            doc = json.loads(body)
            items = doc.get("messages", doc.get("input"))
            self.log.write(json.dumps({
                "session": sid, "messages": len(items) if isinstance(items, list) else 0,
                "previous_response_id": doc.get("previous_response_id"),
                "response_id": "resp_truth_%d" % number}) + "\n")
            self.log.flush()
        if not a.replica_header or sid is None:
            return None
        r = int(sid) % 2 if sid.isdigit() else 0
        if sid == a.move_session and seen >= 1:
            r = 1 - r
        return "r%d" % r

    def failure(self):
        a = self.args
        body = json.dumps(SHAPES[a.api](a).error_body(a.status)).encode()
        return (b"HTTP/1.1 %d Overloaded\r\nContent-Type: application/json\r\nRetry-After: 0\r\n"
                b"Content-Length: %d\r\n\r\n%s" % (a.status, len(body), body))

    def metrics_answer(self):
        if not self.args.metrics_html:
            return NOT_FOUND
        body = b"<!doctype html><html><body><h1>Welcome</h1></body></html>\n"
        return (b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
                b"Connection: close\r\n\r\n%s" % (len(body), body))

    def kind(self, i):
        a = self.args
        if i < a.reasoning:
            return "reasoning"
        return "tool" if i >= a.tokens - a.tool else "content"

    def words(self, i):
        w = self.args.words_per_event
        return "".join(" w%d" % (i * w + j) for j in range(w))

    def stream(self, conn, replica, number):
        a = self.args
        shape = SHAPES[a.api](a, number)
        if a.header_delay_ms:
            time.sleep(a.header_delay_ms / 1000)
        extra = b"Connection: close\r\n" if a.close else b""
        if replica:
            extra += b"%s: %s\r\n" % (a.replica_header.encode(), replica.encode())
        conn.sendall(SSE_HEADERS + extra + b"\r\n" + shape.prelude())
        t0 = time.monotonic()
        i, g, kind = 0, 0, None
        end = a.tokens if a.error_after < 0 else min(a.error_after, a.tokens)
        while i < end:
            k = min(self.groups[g % len(self.groups)], end - i)
            g += 1
            ready = t0 + (i + k - 1) * a.gap_ms / 1000
            if a.ping and i > 0:  # alone, halfway through the gap before this group
                self.sleep_until(ready - a.gap_ms / 2000)
                conn.sendall(shape.ping())
            self.sleep_until(ready)
            data = b""
            for j in range(i, i + k):
                if self.kind(j) != kind:
                    kind = self.kind(j)
                    data += shape.switch(kind)
                data += shape.token(j, kind, self.words(j), j == a.tokens - 1)
            i += k
            if i == a.tokens:
                data += shape.trailer(kind, a.tokens * a.words_per_event)
            conn.sendall(data)
        if i < a.tokens:  # --error-after: the error, then the end of the body
            self.sleep_until(t0 + i * a.gap_ms / 1000)
            conn.sendall(shape.error() + b"0\r\n\r\n")

    @staticmethod
    def sleep_until(when):
        wait = when - time.monotonic()
        if wait > 0:
            time.sleep(wait)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--api", choices=sorted(SHAPES), default="chat")
    parser.add_argument("--tokens", type=int, default=30)
    parser.add_argument("--gap-ms", type=float, default=20)
    parser.add_argument("--groups", default="1", help="events per send(), cycled, e.g. 2,3")
    parser.add_argument("--words-per-event", type=int, default=1)
    parser.add_argument("--reasoning", type=int, default=0)
    parser.add_argument("--tool", type=int, default=0)
    parser.add_argument("--ping", action="store_true")
    parser.add_argument("--usage", action="store_true")
    parser.add_argument("--prompt-tokens", type=int, default=100)
    parser.add_argument("--cached-tokens", type=int, default=64)
    parser.add_argument("--error-after", type=int, default=-1)
    parser.add_argument("--status", type=int, default=0)
    parser.add_argument("--fail-first", type=int, default=0)
    parser.add_argument("--header-delay-ms", type=float, default=0)
    parser.add_argument("--close", action="store_true")
    parser.add_argument("--metrics-html", action="store_true")
    parser.add_argument("--session-header", default="X-Session-ID")
    parser.add_argument("--replica-header", default="")
    parser.add_argument("--move-session", default="")
    parser.add_argument("--log", default="")
    serve_forever(Server(parser.parse_args()).serve)


if __name__ == "__main__":
    main()
