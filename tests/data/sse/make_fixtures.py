#!/usr/bin/env python3
"""Writes the SSE fixtures in this directory, byte for byte as each server frames them.

vLLM and SGLang serialise chunks with pydantic's model_dump_json: compact separators, non-ASCII
as raw UTF-8, unset fields left out (vLLM) or written as null (SGLang), one `data: ...\\n\\n` per
chunk. python_json_chat.sse is the form of servers that use json.dumps(ensure_ascii=True):
non-ASCII as \\uXXXX and emoji as surrogate pairs. Run it from anywhere; it rewrites the files.
"""
import json
import os

HERE = os.path.dirname(os.path.abspath(__file__))
CREATED = 1740000000
MODEL = "Qwen/Qwen2.5-7B-Instruct"

# The reply the chat fixtures stream, one token per delta (tests check the joined text).
TOKENS = ["Sure", "!", " Here", " is", " a", " \"quoted\"", " word", ",\n", "a", " tab",
          "\there", ",", " caf\u00e9", ", na\u00efve", ", \u65e5\u672c\u8a9e", ", \U0001F600",
          " and", " a", " back", "slash", " \\", " done", "."]


def dump(obj, ascii_only=False):
    return json.dumps(obj, separators=(",", ":"), ensure_ascii=ascii_only)


def write(name, events, ascii_only=False, done=True):
    with open(os.path.join(HERE, name), "wb") as f:
        for event in events:
            if isinstance(event, str):
                f.write(event.encode())
            else:
                f.write(("data: " + dump(event, ascii_only) + "\n\n").encode())
        if done:
            f.write(b"data: [DONE]\n\n")


def vllm_chat(cid, deltas, finish, usage, reasoning=False):
    def chunk(choices, **extra):
        return {"id": cid, "object": "chat.completion.chunk", "created": CREATED, "model": MODEL,
                "choices": choices, **extra}
    events = [chunk([{"index": 0, "delta": {"role": "assistant", "content": ""},
                      "logprobs": None, "finish_reason": None}])]
    for delta in deltas:
        events.append(chunk([{"index": 0, "delta": delta, "logprobs": None,
                              "finish_reason": None, "stop_reason": None}]))
    events.append(chunk([{"index": 0, "delta": {"content": ""}, "logprobs": None,
                          "finish_reason": finish, "stop_reason": None}]))
    events.append(chunk([], usage=usage))
    return events


def usage(prompt, completion, cached):
    return {"prompt_tokens": prompt, "total_tokens": prompt + completion,
            "completion_tokens": completion, "prompt_tokens_details": {"cached_tokens": cached}}


def openai_chat(cid, deltas, finish, usage_block, first=None):
    """The OpenAI API's framing (gpt-4o, 2024): a role chunk, one chunk per delta, a finish chunk
    with an empty delta, then the usage-only chunk of stream_options.include_usage."""
    def chunk(choices, **extra):
        return {"id": cid, "object": "chat.completion.chunk", "created": 1727346172,
                "model": "gpt-4o-2024-08-06", "system_fingerprint": "fp_5050236cbd",
                "choices": choices, **extra}
    events = [chunk([{"index": 0, "delta": first or {"role": "assistant", "content": ""},
                      "logprobs": None, "finish_reason": None}])]
    for delta in deltas:
        events.append(chunk([{"index": 0, "delta": delta, "logprobs": None,
                              "finish_reason": None}]))
    events.append(chunk([{"index": 0, "delta": {}, "logprobs": None, "finish_reason": finish}]))
    if usage_block:
        events.append(chunk([], usage=usage_block))
    return events


def qwen3_chat(cid, texts, finish, usage_block):
    """vLLM serving Qwen3 without a reasoning parser: every delta repeats the null fields and
    "usage": null, the think block is plain content."""
    def chunk(delta, finish_reason=None):
        full = {"content": None, "function_call": None, "tool_calls": None, "role": "assistant",
                "refusal": None, "reasoning_content": None}
        full.update(delta)
        return {"id": cid, "choices": [{"index": 0, "delta": full,
                                        "finish_reason": finish_reason}],
                "created": 1772656349, "model": "Qwen/Qwen3-0.6B", "service_tier": None,
                "system_fingerprint": None, "object": "chat.completion.chunk", "usage": None}
    events = [chunk({"content": t}) for t in texts]
    events.append(chunk({"content": ""}, finish))
    events.append({"id": cid, "choices": [], "created": 1772656349, "model": "Qwen/Qwen3-0.6B",
                   "object": "chat.completion.chunk", "usage": usage_block})
    return events


def openai_usage(prompt, completion):
    return {"prompt_tokens": prompt, "completion_tokens": completion,
            "total_tokens": prompt + completion,
            "completion_tokens_details": {"reasoning_tokens": 0}}


def stream_fixtures():
    """The fixtures of docs/metrics.md's rules for streams as real servers send them (issue 17):
    a refusal-only reply, a think block in content with both tags split across events, an R1
    distill's closing tag alone, and one reply per finish_reason."""
    refusal = ["I'm", " sorry", ",", " I", " cannot", " help", " with", " that", "."]
    write("openai_refusal.sse",
          openai_chat("chatcmpl-ABfw4IfQfCCrcuybFm41wJyxjb00", [{"refusal": t} for t in refusal],
                      "stop", openai_usage(79, len(refusal)),
                      first={"role": "assistant", "content": None, "refusal": ""}))
    think = ["<thi", "nk>", "\n", "Okay", ",", " the", " user", " asks", "</th", "ink>\n\n",
             "The", " capital", " is", " Funafuti", "."]
    write("qwen3_think_split.sse",
          qwen3_chat("chatcmpl-think", think, "stop",
                     {"prompt_tokens": 18, "total_tokens": 18 + len(think),
                      "completion_tokens": len(think)}))
    r1 = ["Okay", ",", " so", " the", " user", "</think>", "\n\n", "Hello", "!"]
    write("r1_closing_tag_only.sse",
          vllm_chat("chatcmpl-33523fb1b0d24e93b89686d88c3284d1", [{"content": t} for t in r1],
                    "stop", usage(61, len(r1), 0)))
    words = [" The", " sky", " is", " blue"]
    write("finish_stop.sse",
          openai_chat("chatcmpl-stop", [{"content": t} for t in words], "stop",
                      openai_usage(9, len(words))))
    write("finish_length.sse",
          openai_chat("chatcmpl-length", [{"content": t} for t in words], "length",
                      openai_usage(9, len(words))))
    write("finish_content_filter.sse",
          openai_chat("chatcmpl-filter", [{"content": t} for t in words[:2]], "content_filter",
                      openai_usage(9, 2)))
    write("finish_tool_calls.sse",
          openai_chat("chatcmpl-tools", [
              {"tool_calls": [{"index": 0, "id": "call_Yf2c", "type": "function",
                               "function": {"name": "get_weather", "arguments": ""}}]},
              {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\":"}}]},
              {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]}],
              "tool_calls", openai_usage(64, 3),
              first={"role": "assistant", "content": None, "refusal": None}))
    # A server that ends with [DONE] and never sends a finish_reason.
    none = vllm_chat("chatcmpl-none", [{"content": t} for t in words], None, None)[:-2]
    write("finish_none.sse", none)


def main():
    cid = "chatcmpl-9f3c2a7be1d84b0c8f6a5e4d3c2b1a09"
    write("vllm_chat.sse", vllm_chat(cid, [{"content": t} for t in TOKENS], "stop",
                                     usage(27, len(TOKENS), 16)))
    write("python_json_chat.sse", vllm_chat(cid, [{"content": t} for t in TOKENS], "stop",
                                            usage(27, len(TOKENS), 0)), ascii_only=True)

    thoughts = ["Okay", ",", " the", " user", " wants", " a", " greeting", "."]
    answer = ["Hello", "!", " How", " can", " I", " help", "?"]
    deltas = [{"reasoning_content": t} for t in thoughts] + [{"content": t} for t in answer]
    write("vllm_reasoning.sse",
          vllm_chat("chatcmpl-4be2d0c1a9f84e7d9c3b2a1f0e9d8c7b", deltas, "stop",
                    usage(12, len(deltas), 0)))

    tool_deltas = [
        {"tool_calls": [{"id": "chatcmpl-tool-6c1e0f2a9b8d4c7e", "type": "function", "index": 0,
                         "function": {"name": "get_weather", "arguments": ""}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "{\"city\": "}}]},
        {"tool_calls": [{"index": 0, "function": {"arguments": "\"Paris\"}"}}]},
    ]
    write("vllm_tool_calls.sse",
          vllm_chat("chatcmpl-0a1b2c3d4e5f46a7b8c9d0e1f2a3b4c5", tool_deltas, "tool_calls",
                    usage(143, 18, 128)))

    sglang = []
    sid = "6d1f0e9c8b7a4f3e9d2c1b0a9f8e7d6c"
    def sg(delta, finish=None, matched=None, choices=True, use=None):
        c = [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish,
              "matched_stop": matched}] if choices else []
        return {"id": sid, "object": "chat.completion.chunk", "created": CREATED,
                "model": "default", "choices": c, "usage": use}
    sglang.append(sg({"role": "assistant", "content": "", "reasoning_content": None,
                      "tool_calls": None}))
    for t in TOKENS[:6]:
        sglang.append(sg({"role": None, "content": t, "reasoning_content": None,
                          "tool_calls": None}))
    sglang.append(sg({"role": None, "content": None, "reasoning_content": None,
                      "tool_calls": None}, "stop", 151645))
    sglang.append(sg(None, choices=False,
                     use={"prompt_tokens": 27, "total_tokens": 33, "completion_tokens": 6,
                          "prompt_tokens_details": None}))
    write("sglang_chat.sse", sglang)

    comp = []
    cmpl = "cmpl-3e5f7a9b1c2d4e6f8a0b2c4d6e8f0a1b"
    for t in [" The", " capital", " of", " France", " is", " Paris", "."]:
        comp.append({"id": cmpl, "object": "text_completion", "created": CREATED, "model": MODEL,
                     "choices": [{"index": 0, "text": t, "logprobs": None, "finish_reason": None,
                                  "stop_reason": None}], "usage": None})
    comp.append({"id": cmpl, "object": "text_completion", "created": CREATED, "model": MODEL,
                 "choices": [{"index": 0, "text": "", "logprobs": None, "finish_reason": "length",
                              "stop_reason": None}], "usage": None})
    comp.append({"id": cmpl, "object": "text_completion", "created": CREATED, "model": MODEL,
                 "choices": [], "usage": usage(5, 7, 0)})
    write("vllm_completions.sse", comp)

    # A gateway that reports a failure mid-stream with an SSE event type, after two tokens.
    err = vllm_chat(cid, [{"content": t} for t in TOKENS[:2]], None, None)[:3]
    err.append(": upstream reset\n")
    err.append("event: error\ndata: " + dump({"error": {
        "message": "upstream connection reset by peer", "type": "InternalServerError",
        "param": None, "code": 502}}) + "\n\n")
    write("error_event.sse", err, done=False)

    stream_fixtures()


if __name__ == "__main__":
    main()
