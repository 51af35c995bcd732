#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_ops (tests/fuzz/corpus/ops/): 48 byte strings from a fixed
generator, 16 to 256 bytes long. fuzz_ops reads its input as a program through libFuzzer's
FuzzedDataProvider (integral choices from the end of the data, raw values from the front), so
any bytes are a valid program: these give the first runs a spread of ops, cases and mutations
to grow from. Deterministic: the same bytes every time.

    python3 tests/fuzz/corpus/make_ops_seeds.py
"""
import os
import random

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ops")
os.makedirs(out, exist_ok=True)
rng = random.Random(15)
for i in range(48):
    size = rng.choice([16, 64, 256])
    with open(os.path.join(out, f"seed_{i:02d}"), "wb") as f:
        f.write(bytes(rng.randrange(256) for _ in range(size)))
