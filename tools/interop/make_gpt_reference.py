#!/usr/bin/env python3
"""Writes tests/fixtures/andrea_reference_{N}blocks[_tied]_{f32,f64}.safetensors: small ANDREA
models built with torch.nn alone (no minigraph code), their random weights under ANDREA's
parameter names, a batch of ids and targets, and what PyTorch computes from them: the logits,
the mean next-token loss, and the loss's gradient for every parameter. tests/test_andrea_reference
loads each file into minigraph's Andrea and compares.

Run from the repository root (any Python with torch and safetensors):
    /tmp/torch2/bin/python tools/interop/make_gpt_reference.py [OUTPUT_DIR]
Made with torch 2.15 and safetensors 0.8; the values repeat at every run (fixed seeds). The f32
files are computed in f32 from the f64 weights rounded to f32.
"""
import math
import os
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from safetensors.torch import save_file

VOCAB, WIDTH, CONTEXT, HEADS, MLP_RATIO = 13, 8, 6, 2, 4.0
BATCH, LENGTH = 2, 5
IGNORE_INDEX = -100
# (blocks, tied head)
MODELS = [(0, False), (1, False), (2, False), (1, True)]


class Attention(nn.Module):
    """GPT-2's causal self-attention, written out: softmax(q kᵀ / sqrt(hd) + causal mask) v."""

    def __init__(self):
        super().__init__()
        self.c_attn = nn.Linear(WIDTH, 3 * WIDTH)
        self.c_proj = nn.Linear(WIDTH, WIDTH)

    def forward(self, x):
        b, t, d = x.shape
        hd = d // HEADS
        q, k, v = self.c_attn(x).split(d, dim=2)
        q, k, v = (z.view(b, t, HEADS, hd).transpose(1, 2) for z in (q, k, v))
        scores = q @ k.transpose(-2, -1) / math.sqrt(hd)
        future = torch.triu(torch.ones(t, t, dtype=torch.bool), diagonal=1)
        weights = scores.masked_fill(future, float("-inf")).softmax(dim=-1)
        y = (weights @ v).transpose(1, 2).reshape(b, t, d)
        return self.c_proj(y)


class Mlp(nn.Module):
    def __init__(self):
        super().__init__()
        hidden = round(MLP_RATIO * WIDTH)
        self.c_fc = nn.Linear(WIDTH, hidden)
        self.c_proj = nn.Linear(hidden, WIDTH)

    def forward(self, x):
        return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.ln_1 = nn.LayerNorm(WIDTH, eps=1e-5)
        self.attn = Attention()
        self.ln_2 = nn.LayerNorm(WIDTH, eps=1e-5)
        self.mlp = Mlp()

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class Gpt(nn.Module):
    def __init__(self, blocks, tied):
        super().__init__()
        self.tok_emb = nn.Embedding(VOCAB, WIDTH)
        self.pos_emb = nn.Embedding(CONTEXT, WIDTH)
        self.blocks = nn.ModuleList(Block() for _ in range(blocks))
        self.ln_f = nn.LayerNorm(WIDTH, eps=1e-5) if blocks > 0 else None
        self.head = None if tied else nn.Parameter(torch.empty(WIDTH, VOCAB))  # [D, V]
        self.tied = tied

    def forward(self, ids):
        x = self.tok_emb(ids) + self.pos_emb(torch.arange(ids.shape[1]))
        for block in self.blocks:
            x = block(x)
        if self.ln_f is not None:
            x = self.ln_f(x)
        return x @ (self.tok_emb.weight.T if self.tied else self.head)

    def andrea_names(self):
        """This model's parameters under ANDREA's names."""
        out = {"input.tok_emb.weight": self.tok_emb.weight,
               "input.pos_emb.weight": self.pos_emb.weight}
        for i, block in enumerate(self.blocks):
            for name, p in block.named_parameters():
                out[f"blocks.{i}.{name}"] = p
        if self.ln_f is not None:
            out["ln_f.weight"], out["ln_f.bias"] = self.ln_f.weight, self.ln_f.bias
        if not self.tied:
            out["head.weight"] = self.head
        return out


def make(blocks, tied, dtype):
    torch.manual_seed(42 + blocks + 10 * tied)
    model = Gpt(blocks, tied).double()
    with torch.no_grad():
        for name, p in model.andrea_names().items():
            # Every value away from its initialisation (LayerNorm's ones and zeros included),
            # large enough that the blocks change the logits.
            centre = 1.0 if name.endswith("ln_1.weight") or name.endswith("ln_2.weight") \
                or name == "ln_f.weight" else 0.0
            p.copy_(centre + 0.5 * torch.randn_like(p))
    model = model.to(dtype)
    ids = torch.randint(0, VOCAB, (BATCH, LENGTH))
    targets = torch.randint(0, VOCAB, (BATCH, LENGTH))
    targets[1, 2] = IGNORE_INDEX
    logits = model(ids)
    loss = F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1),
                           ignore_index=IGNORE_INDEX)
    loss.backward()
    tensors = {"ids": ids, "targets": targets, "logits": logits.detach(), "loss": loss.detach()}
    for name, p in model.andrea_names().items():
        tensors[f"param.{name}"] = p.detach()
        tensors[f"grad.{name}"] = p.grad.detach()
    metadata = {"vocab_size": str(VOCAB), "d_model": str(WIDTH), "context": str(CONTEXT),
                "heads": str(HEADS), "mlp_ratio": str(MLP_RATIO), "blocks": str(blocks),
                "tied_head": str(int(tied)), "torch": torch.__version__}
    return {k: v.contiguous() for k, v in tensors.items()}, metadata


def main():
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    out_dir = sys.argv[1] if len(sys.argv) > 1 else os.path.join(root, "tests", "fixtures")
    for blocks, tied in MODELS:
        for dtype, suffix in ((torch.float64, "f64"), (torch.float32, "f32")):
            tensors, metadata = make(blocks, tied, dtype)
            name = f"andrea_reference_{blocks}blocks{'_tied' if tied else ''}_{suffix}"
            path = os.path.join(out_dir, name + ".safetensors")
            save_file(tensors, path, metadata=metadata)
            print(f"wrote {path} ({os.path.getsize(path)} bytes, loss {tensors['loss']:.6f})")


if __name__ == "__main__":
    main()
