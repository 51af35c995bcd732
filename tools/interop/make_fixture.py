#!/usr/bin/env python3
"""Writes tests/fixtures/torch_small.safetensors with PyTorch and the safetensors library: the
file tests/test_safetensors.cpp reads value by value (values: fixture_values.py).

Run from the repository root (any Python with torch and safetensors):
    /tmp/torch2/bin/python tools/interop/make_fixture.py [OUTPUT]
Made with torch 2.15 and safetensors 0.8. The values and the data are the same at every run;
the order of __metadata__'s two keys in the header is not (the library keeps them in a hash
map), so a rerun may change the file's bytes without changing what it holds.
"""
import os
import sys

import torch
from safetensors.torch import save_file

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import fixture_values  # noqa: E402

DTYPES = {
    "F32": torch.float32,
    "F64": torch.float64,
    "I32": torch.int32,
    "I64": torch.int64,
    "BF16": torch.bfloat16,
    "F16": torch.float16,
}


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(
        root, "tests", "fixtures", "torch_small.safetensors")
    tensors = {}
    for name, (dtype, shape, values) in fixture_values.tensors().items():
        # From Python numbers (doubles and ints) straight to the dtype: one rounding, none
        # here, as every value is exact in its dtype.
        tensors[name] = torch.tensor(values, dtype=DTYPES[dtype]).reshape(shape)
    save_file(tensors, out, metadata=fixture_values.METADATA)
    print(f"wrote {out} ({os.path.getsize(out)} bytes, {len(tensors)} tensors)")


if __name__ == "__main__":
    main()
