#!/usr/bin/env python3
"""Checks that PyTorch reads a safetensors file minigraph wrote: every tensor of
fixture_values.minigraph_tensors() with its dtype, shape and values (bit for bit), the
__metadata__ minigraph writes, and the layout (header length a multiple of 8, names sorted in
the header, each tensor's data at a multiple of its element size). Not part of ctest: it needs
PyTorch and the safetensors package.

How to run it, from the repository root with a built tree in BUILD:
    MINIGRAPH_INTEROP_OUT=/tmp/minigraph_interop.safetensors \\
        BUILD/tests/minigraph_tests --gtest_filter='Safetensors.WritesTheFileCheckTorchReadsExpects'
    /tmp/torch2/bin/python tools/interop/check_torch_reads.py /tmp/minigraph_interop.safetensors
(the test writes the file there as well as to its own temporary folder). Prints one line per
tensor and exits 0 when everything matches, 1 otherwise.
"""
import json
import os
import struct
import sys

import torch
from safetensors import safe_open
from safetensors.torch import load_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_values  # noqa: E402

DTYPES = {"F32": torch.float32, "F64": torch.float64, "I32": torch.int32, "I64": torch.int64}
SIZES = {"F32": 4, "F64": 8, "I32": 4, "I64": 8}
# What tests/test_safetensors.cpp adds to the metadata of the file it writes.
EXTRA_METADATA = {"note": "written by tests/test_safetensors.cpp"}


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    path = sys.argv[1]
    failures = []

    loaded = load_file(path)
    expected = fixture_values.minigraph_tensors()
    if sorted(loaded) != sorted(expected):
        failures.append(f"names: expected {sorted(expected)}, got {sorted(loaded)}")
    for name, (dtype, shape, values) in expected.items():
        if name not in loaded:
            continue
        t = loaded[name]
        want = torch.tensor(values, dtype=DTYPES[dtype]).reshape(shape)
        ok = t.dtype == want.dtype and list(t.shape) == shape and torch.equal(t, want)
        print(f"{'ok  ' if ok else 'FAIL'} {name}: {t.dtype} {list(t.shape)}")
        if not ok:
            failures.append(f"{name}: expected {want}, got {t}")

    with safe_open(path, framework="pt") as f:
        metadata = f.metadata() or {}
    for key, value in {"format": "pt", "framework": "minigraph", **EXTRA_METADATA}.items():
        if metadata.get(key) != value:
            failures.append(f"__metadata__[{key!r}]: expected {value!r}, got {metadata.get(key)!r}")
    if not metadata.get("version"):
        failures.append("__metadata__ has no 'version'")
    print(f"metadata: {metadata}")

    with open(path, "rb") as f:
        (n,) = struct.unpack("<Q", f.read(8))
        header = json.loads(f.read(n), object_pairs_hook=lambda pairs: pairs)
    if n % 8:
        failures.append(f"header length {n} is not a multiple of 8")
    names = [k for k, _ in header if k != "__metadata__"]
    if names != sorted(names):
        failures.append(f"header names not sorted: {names}")
    for name, info in header:
        if name == "__metadata__":
            continue
        info = dict(info)
        begin = info["data_offsets"][0]
        if (8 + n + begin) % SIZES[info["dtype"]]:
            failures.append(f"{name}: data at file offset {8 + n + begin}, not a multiple of "
                            f"{SIZES[info['dtype']]}")

    for failure in failures:
        print("FAIL", failure)
    print(f"{len(expected)} tensors checked, {len(failures)} failures")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
