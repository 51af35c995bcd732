"""The values of the safetensors interop files, from formulas that tests/test_safetensors.cpp
recomputes in C++ (fixture_tensors() there): change both together.

Every value is exact in its dtype (multiples of 1/8 in small ranges, powers of two), so both
sides compare bit for bit; the f64 one goes through the same double operations on both sides.
"""
import math

INF = math.inf


def tensors():
    """name -> (safetensors dtype, shape, values in row-major order) of the PyTorch fixture."""
    return {
        # A name with dots, as a module path: the layout state dicts use.
        "input.tok_emb.weight": ("F32", [4, 3], [(i - 5) * 0.375 for i in range(12)]),
        "layers.0.norm.bias": ("F64", [5], [i * 0.1 - 1.0 / 3.0 for i in range(5)]),
        "ids": ("I64", [2, 3], [-(2**63), -1, 0, 1, 2**53 + 1, 2**63 - 1]),
        "counts": ("I32", [3], [-(2**31), 7919, 2**31 - 1]),
        "bf16.weight": ("BF16", [2, 4], [(i - 3) * 0.5 for i in range(6)] + [2.0**100, -(2.0**-100)]),
        # Zero of both signs, the smallest and largest subnormals, the smallest normal, the
        # largest finite value, the infinities and NaN.
        "f16.special": ("F16", [9], [0.0, -0.0, 2.0**-24, 2.0**-14 - 2.0**-24, 2.0**-14, 65504.0,
                                     INF, -INF, math.nan]),
        "f16.ramp": ("F16", [2, 3], [(i - 2) * 0.25 for i in range(6)]),
        "scalar": ("F32", [], [3.5]),
        "empty": ("F32", [0, 3], []),
    }


# The fixture's __metadata__ (PyTorch's save_file adds nothing of its own).
METADATA = {"format": "pt", "source": "tools/interop/make_fixture.py"}


def minigraph_tensors():
    """The tensors of tensors() whose dtype minigraph writes (F32, F64, I32, I64): the file the
    C++ test writes for check_torch_reads.py."""
    return {k: v for k, v in tensors().items() if v[0] in ("F32", "F64", "I32", "I64")}
