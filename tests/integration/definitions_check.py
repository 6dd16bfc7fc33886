"""Recomputes `stampede report DIR --definitions vllm,aiperf,guidellm,sglang` from DIR/requests.jsonl
independently and compares it with the printed table (3 decimals).

usage: definitions_check.py DIR TABLE.txt
"""
import json
import sys


def pct(values, q):
    """numpy.percentile's default (linear) interpolation."""
    v = sorted(values)
    rank = q * (len(v) - 1)
    lo = int(rank)
    hi = min(lo + 1, len(v) - 1)
    return v[lo] + (rank - lo) * (v[hi] - v[lo])


def main():
    run_dir, table = sys.argv[1], sys.argv[2]
    rows = [json.loads(line) for line in open(f"{run_dir}/requests.jsonl")]
    rows = [r for r in rows if not r["warmup"] and r["error"] == "none"]
    assert rows, "no ok request in the trace"
    want = {t: {"ttft": [], "ttfo": [], "tpot": [], "itl": []} for t in ("vllm", "aiperf", "guidellm", "sglang")}
    multi = 0
    for r in rows:
        c, send, end, n = r["chunks_us"], r["send_us"], r["end_us"], r["output_tokens"]
        k = r.get("chunk_tokens") or [1] * len(c)
        multi += max(k) > 1
        ttft = (c[0] - send) / 1000
        for t in want:
            want[t]["ttft"].append(ttft)
        gaps = [(c[i] - c[i - 1]) / 1000 for i in range(1, len(c))]
        want["vllm"]["itl"] += gaps
        want["vllm"]["tpot"].append((c[-1] - c[0]) / 1000 / (n - 1))
        for i, g in enumerate(gaps, start=1):
            want["sglang"]["itl"] += [g / k[i]] * k[i]
        want["sglang"]["tpot"].append((end - c[0]) / 1000 / (n - 1))
        want["aiperf"]["ttfo"].append((r["first_content_us"] - send) / 1000)
        want["aiperf"]["itl"].append((c[-1] - c[0]) / 1000 / (n - 1))
        want["guidellm"]["tpot"].append((c[-1] - send) / 1000 / n)
        want["guidellm"]["itl"].append((c[-1] - c[0]) / 1000 / (n - 1))
    assert multi > 0, "the eagle3 mock sent no chunk of several tokens"
    got = {}
    for line in open(table):
        cells = line.split()
        if cells and cells[0] in want:
            got[cells[0]] = cells[1:]
    assert set(got) == set(want), f"tools printed: {sorted(got)}"

    def close(tool, column, value, expected):
        if expected is None:
            assert value == "-", f"{tool} {column}: {value}, expected none"
            return
        assert abs(float(value) - expected) <= 0.0015, f"{tool} {column}: {value}, expected {expected:.4f}"

    for tool, w in want.items():
        g = got[tool]
        close(tool, "TTFT p50", g[0], pct(w["ttft"], 0.5))
        close(tool, "TTFT p99", g[1], pct(w["ttft"], 0.99))
        close(tool, "TTFO p50", g[2], pct(w["ttfo"], 0.5) if w["ttfo"] else None)
        close(tool, "TPOT p50", g[3], pct(w["tpot"], 0.5) if w["tpot"] else None)
        close(tool, "ITL mean", g[5], sum(w["itl"]) / len(w["itl"]))
        close(tool, "ITL p50", g[6], pct(w["itl"], 0.5))
        assert int(g[8]) == len(w["itl"]), f"{tool} ITL n: {g[8]}, expected {len(w['itl'])}"
    # the definitions really disagree on this run: that is the point of the table
    assert int(got["sglang"][8]) > int(got["vllm"][8]), "SGLang spreads multi-token chunks"
    assert float(got["aiperf"][2]) > float(got["aiperf"][0]), "TTFO after the reasoning tokens"
    assert float(got["guidellm"][3]) > float(got["vllm"][3]), "GuideLLM's TPOT includes TTFT"
    print(f"ok: {len(rows)} requests, {multi} with multi-token chunks; ITL n "
          + ", ".join(f"{t} {got[t][8]}" for t in want))


if __name__ == "__main__":
    main()
