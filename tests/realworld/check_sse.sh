#!/usr/bin/env bash
# make realworld: every SSE body of $REALWORLD/sse replayed through stampede. sse_replay_server.py
# (tests/integration) serves the captures one per request, 15 ms before each write, once with one
# event per write and once with three; `stampede run --trace` takes them one at a time. The
# structured captures (a JSON list of chunks, or one chunk per line) are written out as the SSE a
# server would send first ("json->sse" in the recognised column). Each row's figures are what
# stampede recorded; the verdict compares them with what the capture itself says, read here by a
# separate reading of the bytes (the SSE framing, the chunks' JSON, the reasoning tags of
# docs/metrics.md section 2): the request's outcome, TTFT present when a token came, the
# finish_reason, the output tokens (usage, else token events), the reasoning/answer events, a
# refusal, and the same figures at three events per write. ok, FAIL, or note (a capture whose
# reasoning cannot be told apart, said in the figures).
set -u
here=$(cd "$(dirname "$0")" && pwd)
source "$here/row.sh"
SSE=$REALWORLD/sse
work=${RW_SCRATCH:-$(mktemp -d)}/sse
mkdir -p "$work/bodies"
if [ ! -d "$SSE" ]; then
    echo "no $SSE: nothing to replay" >&2
    exit 0
fi

python3 - "$SSE" "$work" <<'PY' || exit 1
"""Writes $work/bodies/NNN.sse, one per capture, and $work/manifest.json."""
import json, os, sys
sse, work = sys.argv[1:]
skip = {"SOURCE.md", "notes.md", "replay.yaml", "model_replay_config.yaml"}
manifest = []
for root, dirs, files in os.walk(sse):
    dirs.sort()
    for name in sorted(files):
        if name in skip:
            continue
        path = os.path.join(root, name)
        raw = open(path, "rb").read()
        if name.endswith(".json"):
            chunks = [item["data"] for item in json.loads(raw)["input_stream"]]
            kind = "json->sse"
        elif name.endswith(".jsonl"):
            chunks = [json.loads(line) for line in raw.decode().splitlines() if line.strip()]
            kind = "jsonl->sse"
        else:
            chunks, kind = None, "sse"
        if chunks is not None:
            raw = "".join("data: " + json.dumps(c, separators=(",", ":"), ensure_ascii=False)
                          + "\n\n" for c in chunks).encode() + b"data: [DONE]\n\n"
        body = os.path.join(work, "bodies", "%03d.sse" % len(manifest))
        open(body, "wb").write(raw)
        manifest.append({"input": path, "recognised": kind, "body": body})
json.dump(manifest, open(os.path.join(work, "manifest.json"), "w"))
PY

servers=()
trap 'for p in "${servers[@]:-}"; do [ -n "$p" ] && kill "$p" 2>/dev/null; done' EXIT

# replay PER_WRITE: every body through the replay server and one `stampede run`; results in
# $work/run$PER_WRITE.
replay() {
    local per_write=$1 log=$work/server$1.log addr i
    mapfile -t bodies < <(python3 -c 'import json,sys; [print(m["body"]) for m in json.load(open(sys.argv[1]))]' "$work/manifest.json")
    python3 "$here/../integration/sse_replay_server.py" --per-write "$per_write" --gap-ms 15 \
        "${bodies[@]}" >"$log" 2>&1 &
    servers+=($!)
    for ((i = 0; i < 100; i++)); do
        addr=$(grep -Eo 'listening on [0-9.]+:[0-9]+' "$log" 2>/dev/null) && break
        sleep 0.1
    done
    [ -n "$addr" ] || { echo "the replay server did not start: $(cat "$log")" >&2; exit 1; }
    cat >"$work/replay.yaml" <<YAML
target: {model: replay, timeout: 60s}
workload: {kind: requests, input_tokens: 8, output_tokens: 64}
scheduler: {kind: concurrent, concurrency: 1}
limits: {max_requests: ${#bodies[@]}}
YAML
    timeout 600 "$STAMPEDE" run "$work/replay.yaml" --workers 1 --target "http://${addr#listening on }" \
        --out "$work/run$per_write" --trace >"$work/run$per_write.table" 2>"$work/run$per_write.err" ||
        { echo "stampede run failed ($per_write per write): $(tail -5 "$work/run$per_write.err")" >&2; exit 1; }
}
replay 1
replay 3

failed=0
while IFS=$'\t' read -r input recognised figures verdict; do
    row "$input" "$recognised" "$figures" "$verdict"
    [ "$verdict" != FAIL ] || failed=1
done < <(python3 - "$work" <<'PY'
import json, os, re, sys
work = sys.argv[1]
manifest = json.load(open(os.path.join(work, "manifest.json")))
OPEN, CLOSE = "<think>", "</think>"
CLASSES = {"stop": "stop", "length": "length", "tool_calls": "tool_calls",
           "function_call": "tool_calls", "content_filter": "content_filter"}

def rows(per_write):
    path = os.path.join(work, "run%d" % per_write, "requests.jsonl")
    found = sorted((json.loads(l) for l in open(path)), key=lambda r: r["send_us"])
    assert len(found) == len(manifest), f"{len(found)} requests for {len(manifest)} captures"
    return found

def events(raw):
    """(event name, data) per SSE event, as the WHATWG rules read them."""
    out = []
    blocks = re.split(r"\r?\n\r?\n", raw.decode("utf-8"))
    for block in blocks[:-1]:  # the last one has no blank line after it: never dispatched
        name, data = "", []
        for line in re.split(r"\r?\n", block):
            if not line or line.startswith(":"):
                continue
            field, _, value = line.partition(":")
            value = value[1:] if value.startswith(" ") else value
            if field == "data":
                data.append(value)
            elif field == "event":
                name = value
        if data:
            out.append((name, "\n".join(data)))
    return out

def expect(raw):
    """What the capture says: error, token events (kind, text), finish, usage, refusal."""
    e = {"error": "none", "tokens": [], "finish": "none", "usage": None, "refusal": False}
    for name, data in events(raw):
        if name == "error":
            e["error"] = "server_error_event"
            continue
        if data == "[DONE]":
            e["done"] = True
            break
        try:
            chunk = json.loads(data)
        except ValueError:
            e["error"] = "malformed_sse"
            break
        if chunk.get("usage"):
            e["usage"] = chunk["usage"].get("completion_tokens")
        choices = chunk.get("choices") or []
        if not choices:
            continue
        c = choices[0]
        delta = c.get("delta") or {}
        text = delta.get("content") if "delta" in c else c.get("text")
        reasoning = delta.get("reasoning_content") or delta.get("reasoning")
        if delta.get("refusal"):
            e["refusal"] = True
        if text or reasoning or delta.get("refusal") or delta.get("tool_calls"):
            kind = "answer" if (delta.get("tool_calls") or delta.get("refusal")) else \
                   "text" if text else "reasoning"
            e["tokens"].append((kind, text or ""))
        if c.get("finish_reason"):
            e["finish"] = CLASSES.get(c["finish_reason"], "other")
    if e["error"] == "none" and not e.get("done") and e["finish"] == "none":
        e["error"] = "no_done"  # ended cleanly with neither [DONE] nor a finish_reason
    return e

def split(tokens):
    """(reasoning, answer) events: the text up to the end of the first closing tag is reasoning
    when the reply opens with the tag or a closing tag comes; an event is answer when it ends
    after that point."""
    reply = "".join(t for k, t in tokens if k == "text")
    end = 0
    if reply.lstrip().startswith(OPEN):
        start = len(reply) - len(reply.lstrip()) + len(OPEN)
        close = reply.find(CLOSE, start)
        end = close + len(CLOSE) if close >= 0 else len(reply) + 1
    elif CLOSE in reply:
        end = reply.find(CLOSE) + len(CLOSE)
    reasoning = answer = at = 0
    for kind, text in tokens:
        if kind == "text":
            at += len(text)
            is_answer = at > end
        else:
            is_answer = kind == "answer"
        answer += is_answer
        reasoning += not is_answer
    return reasoning, answer, CLOSE in reply or reply.lstrip().startswith(OPEN)

def figures(r):
    return (r["error"], r["ttft_ms"] is not None, r.get("finish_reason"), r["output_tokens"],
            r["reasoning_chunks"], r["content_chunks"], r.get("refusal"))

for m, one, three in zip(manifest, rows(1), rows(3)):
    e = expect(open(m["body"], "rb").read())
    reasoning, answer, tagged = split(e["tokens"])
    ok = e["error"] == "none"
    want = (e["error"], ok and bool(e["tokens"]), e["finish"],
            e["usage"] if e["usage"] is not None else len(e["tokens"]),
            reasoning, answer, e["refusal"])
    got = figures(one)
    shown = "%s, tok %d %s, TTFT %s, fin %s, reas %d/ans %d%s%s" % (
        got[0], got[3], one["output_tokens_source"], "yes" if got[1] else "no", got[2], got[4],
        got[5], ", refusal" if got[6] else "", ", think tags" if tagged else "")
    wrong = [k for k, g, w in zip(("error", "ttft", "finish", "tokens", "reasoning", "answer",
                                   "refusal"), got, want) if g != w and (ok or k == "error")]
    if figures(three) != got:
        wrong.append("3/write differs")
    verdict = "ok"
    if wrong:
        verdict, shown = "FAIL", shown + " [" + ", ".join(wrong) + "]"
    elif not tagged and "r1-distill" in m["input"].lower() and e["finish"] == "length":
        verdict, shown = "note", shown + " (cut before </think>: its reasoning reads as answer)"
    elif re.split(rb"\r?\n\r?\n", open(m["body"], "rb").read())[-1].strip():
        verdict, shown = "note", shown + " (last event lacks its blank line: not dispatched)"
    print("\t".join((m["input"], m["recognised"], shown, verdict)))
PY
)
exit $failed
