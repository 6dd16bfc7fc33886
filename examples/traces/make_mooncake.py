#!/usr/bin/env python3
"""Writes a small Mooncake-format trace (examples/traces/mooncake-small.jsonl) with shared
hash_ids prefixes: a few "documents" (system prompts, long contexts) of several 512-token blocks
each, which requests reuse in full or in part before adding blocks of their own, as in the
Mooncake conversation traces. Deterministic: the same file every time.
   python3 examples/traces/make_mooncake.py > examples/traces/mooncake-small.jsonl"""
import json
import random

BLOCK = 512
rng = random.Random(2024)
documents = []
next_hash = 0
for _ in range(6):  # shared prefixes of 1 to 4 blocks
    n = rng.randint(1, 4)
    documents.append(list(range(next_hash, next_hash + n)))
    next_hash += n
t = 0.0
for i in range(300):
    t += rng.expovariate(10.0) * 1000.0  # ~10 requests/s, in ms
    doc = rng.choice(documents)
    shared = doc[: rng.randint(1, len(doc))]
    own = rng.randint(0, 2)
    hashes = shared + list(range(next_hash, next_hash + own))
    next_hash += own
    last = rng.randint(1, BLOCK)  # the last block is partly used
    input_length = (len(hashes) - 1) * BLOCK + last
    output_length = rng.randint(8, 64)
    print(json.dumps({"timestamp": int(t), "input_length": input_length,
                      "output_length": output_length, "hash_ids": hashes}))
