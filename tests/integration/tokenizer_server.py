#!/usr/bin/env python3
"""A chat-completions server (aiohttp) that replays a reply cut into chunks, for the tokenizer
tests: every POST streams the chunks of --chunks FILE (keys --reply, comma-separated: taken in
turn, request after request), one SSE event each,
--gap-ms apart (so each is its own read, its own chunk), then finish_reason "stop" and [DONE].
No usage unless --usage-delta D: then a last event carries usage with completion_tokens = the
reply's true tokens + D and prompt_tokens = the words of every message + 5 (a stand-in for a chat
template's tokens). Each request's last user message is appended to --log as a JSON string line;
stampede's preflight request (X-Stampede-Preflight) is answered apart, neither logged nor counted.
Prints "listening on 127.0.0.1:PORT" once it accepts.
"""
import argparse
import asyncio
import json

from aiohttp import web


def event(obj):
    return ("data: " + json.dumps(obj, separators=(",", ":")) + "\n\n").encode()


def chunk(delta, finish=None):
    return {"id": "chatcmpl-tok", "object": "chat.completion.chunk", "created": 0, "model": "tok",
            "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}


async def completions(request):
    args, replies = request.app["args"], request.app["replies"]
    if "X-Stampede-Preflight" in request.headers:  # stampede's check before the run: not counted
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        await response.write(event(chunk({"content": "ok"}, "length")) + b"data: [DONE]\n\n")
        await response.write_eof()
        return response
    reply = replies[request.app["served"] % len(replies)]
    request.app["served"] += 1
    body = await request.json()
    messages = body.get("messages", [])
    user = [m["content"] for m in messages if m.get("role") == "user"]
    with open(args.log, "a") as log:
        log.write(json.dumps(user[-1] if user else "") + "\n")
    response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
    await response.prepare(request)
    for text in reply["chunks"]:
        await response.write(event(chunk({"content": text})))
        await asyncio.sleep(args.gap_ms / 1000)
    await response.write(event(chunk({}, "stop")))
    if args.usage_delta is not None:
        words = sum(len(str(m.get("content", "")).split()) for m in messages)
        usage = {"prompt_tokens": words + 5, "completion_tokens": reply["tokens"] + args.usage_delta,
                 "total_tokens": words + 5 + reply["tokens"] + args.usage_delta}
        await response.write(event({"id": "chatcmpl-tok", "object": "chat.completion.chunk",
                                    "created": 0, "model": "tok", "choices": [], "usage": usage}))
    await response.write(b"data: [DONE]\n\n")
    await response.write_eof()
    return response


async def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--chunks", required=True)
    parser.add_argument("--reply", default="aligned")
    parser.add_argument("--log", required=True)
    parser.add_argument("--gap-ms", type=float, default=10)
    parser.add_argument("--usage-delta", type=int)
    args = parser.parse_args()
    app = web.Application()
    app["args"] = args
    chunks = json.load(open(args.chunks))
    app["replies"] = [chunks[key] for key in args.reply.split(",")]
    app["served"] = 0
    app.router.add_post("/v1/chat/completions", completions)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]
    print(f"listening on 127.0.0.1:{port}", flush=True)
    await asyncio.Event().wait()


if __name__ == "__main__":
    asyncio.run(main())
