#!/usr/bin/env python3
"""Writes the seed corpus of fuzz_checkpoint (tests/fuzz/fuzz_checkpoint.cpp) into
tests/fuzz/corpus/checkpoint/: a mode byte (0 strict model load, 1 non-strict, 2 GPT-2 names,
3 AdamW state), then a safetensors file for the target's small ANDREA (V 6, D 4, T 3). Files that
load (every parameter in f32, f64, BF16; GPT-2 names; an optimizer's state) and files that must
be refused whole (a wrong shape, an integer dtype, a missing or extra name, a step of -1, a
parameter with half its state). Deterministic; run it again after changing it and commit.

    python3 tests/fuzz/corpus/make_checkpoint_seeds.py
"""
import os
import sys

sys.dont_write_bytecode = True  # no __pycache__ beside the seeds
from make_safetensors_seeds import bf16, file_of, pack  # noqa: E402

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "checkpoint")
V, D, T = 6, 4, 3
SHAPES = {"input.tok_emb.weight": [V, D], "input.pos_emb.weight": [T, D], "head.weight": [D, V]}


def numel(shape):
    n = 1
    for s in shape:
        n *= s
    return n


def values(shape, start):
    return [(start + i) / 8.0 for i in range(numel(shape))]


def model(dtype="F32", shapes=None, drop=(), extra=()):
    shapes = dict(SHAPES if shapes is None else shapes)
    tensors = []
    for i, (name, shape) in enumerate(sorted(shapes.items())):
        if name in drop:
            continue
        vals = values(shape, i * 100)
        raw = {"F32": lambda: pack("f", vals), "F64": lambda: pack("d", vals),
               "BF16": lambda: bf16(vals), "I64": lambda: pack("q", [int(v) for v in vals])}[dtype]()
        tensors.append((name, dtype, shape, raw))
    for name in extra:
        tensors.append((name, "F32", [1], pack("f", [1.0])))
    return file_of(tensors)


def optimizer(step=1, param_step=1, drop_state=()):
    tensors = [("step", "I64", [1], pack("q", [step]))]
    for name, shape in sorted(SHAPES.items()):
        tensors.append((name + ".step", "I64", [1], pack("q", [param_step])))
        for state in ("exp_avg", "exp_avg_sq"):
            if (name, state) in drop_state:
                continue
            tensors.append((name + "." + state, "F32", shape, pack("f", values(shape, 1))))
    return file_of(tensors)


def seeds():
    gpt2 = {"transformer.wte.weight": [V, D], "transformer.wpe.weight": [T, D],
            "lm_head.weight": [V, D]}
    return {
        "strict_f32": b"\x00" + model(),
        "strict_f64": b"\x00" + model("F64"),
        "strict_bf16": b"\x00" + model("BF16"),
        "strict_missing": b"\x00" + model(drop=("head.weight",)),
        "strict_unexpected": b"\x00" + model(extra=("head.bias",)),
        "strict_wrong_shape": b"\x00" + model(shapes={**SHAPES, "head.weight": [V, D]}),
        "strict_i64": b"\x00" + model("I64"),
        "loose_missing": b"\x01" + model(drop=("input.pos_emb.weight",)),
        "loose_unexpected": b"\x01" + model(extra=("blocks.0.attn.weight",)),
        "gpt2_names": b"\x02" + model(shapes=gpt2),
        "gpt2_lm_head_1d": b"\x02" + model(shapes={**gpt2, "lm_head.weight": [V * D]}),
        "adamw_state": b"\x03" + optimizer(),
        "adamw_negative_step": b"\x03" + optimizer(step=-1),
        "adamw_zero_param_step": b"\x03" + optimizer(param_step=0),
        "adamw_half_state": b"\x03" + optimizer(drop_state=(("head.weight", "exp_avg_sq"),)),
        "adamw_only_step": b"\x03" + file_of([("step", "I64", [1], pack("q", [7]))]),
    }


def main():
    os.makedirs(OUT, exist_ok=True)
    for old in os.listdir(OUT):
        os.remove(os.path.join(OUT, old))
    for name, data in sorted(seeds().items()):
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
    print("wrote %d seeds to %s" % (len(seeds()), OUT))


if __name__ == "__main__":
    main()
