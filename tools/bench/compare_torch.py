#!/usr/bin/python3
"""The work of `minigraph bench`, done in PyTorch on the CPU, side by side with minigraph.

    build/tools/minigraph bench --json bench.json
    /usr/bin/python3 tools/bench/compare_torch.py --minigraph bench.json --json compare.json
    /tmp/torch2/bin/python tools/bench/compare_torch.py --minigraph bench.json --json compare2.json

Runs with any PyTorch: Debian's python3-torch 1.13 (OpenBLAS inside, seen by /usr/bin/python3)
or the one `pip install torch` gives in a virtualenv (2.x, MKL and oneDNN inside; see
docs/performance.md). Each thread count runs in a process of its own whose every pool is
pinned to that count before torch loads: OpenMP (OMP_NUM_THREADS, torch.set_num_threads) and
the BLAS pool torch's GEMMs run on (MKL_NUM_THREADS, checked with mkl_get_max_threads through
torch's parallel_info; OPENBLAS_NUM_THREADS, then openblas_set_num_threads on the loaded
library, checked), so a "1-thread" torch run is not a 2-thread one. The PyTorch version, its
BLAS and the CPU kernels it dispatches to are recorded. Measurements carry minigraph's names; the table
shows both medians and the ratio minigraph / PyTorch (below 1: minigraph is faster).
"""
import argparse
import gc
import ctypes
import json
import os
import re
import resource
import statistics
import subprocess
import sys
import time

V, D, T = 8449, 768, 1024  # ANDREA-120M: vocabulary, width, positions
CALLS_PER_REP = 2000        # tiny ops are timed in batches, as in minigraph bench


def loaded_blas_libraries():
    """The BLAS libraries mapped into this process, resolved through Debian's alternatives."""
    libs = set()
    with open("/proc/self/maps") as maps:
        for line in maps:
            path = line.split()[-1]
            if "blas" in os.path.basename(path) and ".so" in path:
                libs.add(os.path.realpath(path))
    return sorted(libs)


def pin_blas_threads(threads):
    """Sets and returns the thread count of every loaded OpenBLAS (None if none is loaded)."""
    counts = []
    for path in loaded_blas_libraries():
        lib = ctypes.CDLL(path)
        if hasattr(lib, "openblas_set_num_threads"):
            lib.openblas_set_num_threads(threads)
            counts.append(lib.openblas_get_num_threads())
    return max(counts) if counts else None


def mkl_threads(torch):
    """MKL's thread count as torch reports it (None where torch has no MKL)."""
    match = re.search(r"mkl_get_max_threads\(\) : (\d+)", torch.__config__.parallel_info())
    return int(match.group(1)) if match else None


def torch_blas(torch):
    """What torch's CPU GEMMs run on: "MKL 2024.2 (kernels for AVX512)", "OpenBLAS 0.3.21"."""
    config = torch.__config__.show()
    blas = re.search(r"BLAS_INFO=(\w+)", config)
    name = blas.group(1) if blas else "unknown BLAS"
    if name == "mkl":
        version = re.search(r"Math Kernel Library Version ([\d.]+)", config)
        name = f"MKL {version.group(1) if version else ''}".strip()
    else:
        name = f"{name} BLAS: " + ", ".join(
            "/".join(p.split("/")[-2:]) for p in loaded_blas_libraries())
    cpu = getattr(torch.backends, "cpu", None)  # torch 2.x; 1.13 does not say
    capability = cpu.get_cpu_capability() if cpu is not None else "an unreported ISA"
    return f"{name} (ATen CPU kernels for {capability})"


def timed(work, reps, warmup=1):
    for _ in range(warmup):
        work()
    times, faults_before = [], resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(reps):
        start = time.perf_counter()
        work()
        times.append((time.perf_counter() - start) * 1e3)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults_before
    return {"median_ms": statistics.median(times), "min_ms": min(times), "max_ms": max(times),
            "faults_per_rep": faults / reps}


def worker(threads, batches, reps, name_filter=""):
    """Runs in a process pinned to `threads`; returns torch's records: of the groups of work
    where a record's name contains `name_filter` (as `minigraph bench --filter`)."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(threads)
    blas_threads = pin_blas_threads(threads)
    assert torch.get_num_threads() == threads, torch.get_num_threads()
    assert blas_threads in (None, threads), f"BLAS pool has {blas_threads} threads, not {threads}"
    assert mkl_threads(torch) in (None, threads), f"MKL has {mkl_threads(torch)} threads"
    records = []

    def wanted(*names):
        return any(name_filter in name for name in names)

    def record(name, batch, t, unit="", per_call=1):
        r = {"name": name, "backend": "torch", "threads": threads, "batch": batch,
             "median_ms": t["median_ms"] / per_call, "min_ms": t["min_ms"] / per_call,
             "max_ms": t["max_ms"] / per_call, "achieved": None, "unit": unit,
             "limit_pct": None, "ratio_vs_raw": None, "blas_threads": blas_threads}
        records.append(r)
        return r

    def param(*shape):
        return torch.randn(*shape).requires_grad_()

    # Per-op overhead on 4 floats.
    a, b, g = param(4), param(4), torch.randn(4)

    def recorded_ops():
        for _ in range(CALLS_PER_REP):
            a + b

    def one_op_graphs():
        for _ in range(CALLS_PER_REP):
            a.grad = b.grad = None
            (a + b).backward(g)

    for name, work in (("overhead.recorded_op", recorded_ops),
                       ("overhead.one_op_fwd_bwd", one_op_graphs)):
        if not wanted(name):
            continue
        r = record(name, None, timed(work, reps), "us", CALLS_PER_REP)
        r["achieved"] = r["median_ms"] * 1e3

    for batch in batches:
        ids = torch.randint(0, V, (batch, T))
        tok, pos, w = param(V, D), param(T, D), param(D, V)
        x, logits_in = param(batch, T, D), param(batch, T, V)
        ln_w, ln_b, scores = param(D), param(D), param(batch, 12, T, T)

        # Each op's forward, and its backward given an upstream gradient (autograd.grad).
        ops = {
            "embedding": (lambda: F.embedding(ids, tok), [tok]),
            "token_position_embedding": (lambda: F.embedding(ids, tok) + pos[:T], [tok, pos]),
            "position_embedding": (lambda: pos[:T], [pos]),  # a view in torch: no copy
            "add": (lambda: x + pos, [x, pos]),
            "matmul": (lambda: x @ w, [x, w]),
            "sum_to": (lambda: logits_in.sum(), [logits_in]),
            "layer_norm": (lambda: F.layer_norm(x, (D,), ln_w, ln_b), [x, ln_w, ln_b]),
            "gelu_tanh": (lambda: F.gelu(x, approximate="tanh"), [x]),
            "softmax": (lambda: torch.softmax(scores, -1), [scores]),
        }
        for op, (forward, inputs) in ops.items():
            if not wanted(f"op.{op}.forward", f"op.{op}.backward"):
                continue
            record(f"op.{op}.forward", batch, timed(forward, reps))
            out = forward()
            grad_out = torch.randn_like(out)
            record(f"op.{op}.backward", batch, timed(
                lambda: torch.autograd.grad(out, inputs, grad_out, retain_graph=True), reps))
        grad_x = torch.randn(batch, T, D)
        if wanted("op.embedding_backward.forward"):
            record("op.embedding_backward.forward", batch, timed(
                lambda: torch.ops.aten.embedding_dense_backward(grad_x, ids, V, -1, False), reps))

        def zero_grads():
            for p in (tok, pos, w, x):
                p.grad = None

        def input_layer():
            zero_grads()
            (F.embedding(ids, tok) + pos[:T]).backward(grad_x)

        def head():
            zero_grads()
            (x @ w).sum().backward()

        grad_logits = torch.randn(batch, T, V)

        def head_given_grad():
            zero_grads()
            (x @ w).backward(grad_logits)

        def step():
            zero_grads()
            ((F.embedding(ids, tok) + pos[:T]) @ w).sum().backward()

        if wanted("train_step.peak_memory", "head_loss.unfused.peak_memory"):
            train_records(batch, ids, reps, record)
        if wanted("attention.fused.peak_memory", "attention.composed.peak_memory"):
            attention_records(batch, reps, record)
        for name, work in (("input_layer.fwd_bwd", input_layer), ("head.fwd_bwd", head),
                           ("head.fwd_bwd_given_grad", head_given_grad)):
            if wanted(name):
                record(name, batch, timed(work, reps))
        if wanted("step.page_faults"):
            t = timed(step, reps, warmup=2)
            record("step", batch, t)
            faults = record("step.page_faults", batch, t, "faults/step")
            faults["achieved"] = t["faults_per_rep"]
    if wanted("gpt_train_step.T64.peak_resident", "gpt_train_step.T1024.peak_resident"):
        gpt_records(reps, record, name_filter)
    return records


def status_bytes(field):
    """A field of /proc/self/status ("VmRSS", "VmHWM") in bytes."""
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    return 0


def peak_growth_mib(work):
    """The resident set's high-water mark during `work` above the resident set before it, as
    minigraph bench measures its own (VmHWM reset through /proc/self/clear_refs)."""
    gc.collect()
    with open("/proc/self/clear_refs", "w") as refs:
        refs.write("5")
    before = status_bytes("VmRSS")
    work()
    return (status_bytes("VmHWM") - before) / 2**20


def train_records(batch, ids, reps, record):
    """What `minigraph train` does per step, in PyTorch eager: embedding + positions, the
    linear head, F.cross_entropy, backward, clip_grad_norm_ and AdamW; and the head's loss
    alone (PyTorch has no fused head + loss: the [n, V] logits are materialised)."""
    import torch
    import torch.nn.functional as F

    tok, pos = torch.nn.Parameter(torch.randn(V, D)), torch.nn.Parameter(torch.randn(T, D))
    w = torch.nn.Parameter(torch.randn(D, V) / D ** 0.5)
    targets = torch.randint(0, V, (batch, T))
    optimizer = torch.optim.AdamW([tok, pos, w], lr=1e-3)

    def step():
        x = F.embedding(ids, tok) + pos[:T]
        F.cross_entropy((x @ w).view(-1, V), targets.view(-1)).backward()
        torch.nn.utils.clip_grad_norm_([tok, pos, w], 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    step()  # AdamW's state exists from here on, as in a run
    growth = peak_growth_mib(step)
    t = timed(step, reps)
    record("train_step", batch, t)
    memory = record("train_step.peak_memory", batch, t, "MiB")
    memory["achieved"] = growth

    x = torch.randn(batch, T, D, requires_grad=True)

    def head_loss():
        x.grad = w.grad = None
        F.cross_entropy((x @ w).view(-1, V), targets.view(-1)).backward()

    growth = peak_growth_mib(head_loss)
    t = timed(head_loss, reps)
    record("head_loss.unfused", batch, t)
    memory = record("head_loss.unfused.peak_memory", batch, t, "MiB")
    memory["achieved"] = growth
    optimizer.zero_grad(set_to_none=True)


def gpt_records(reps, record, name_filter):
    """ANDREA-120M's training step in PyTorch eager (torch.nn, F.scaled_dot_product_attention,
    AdamW, clip_grad_norm_), as minigraph bench's gpt_train_step rows: 15 GPT-2 blocks at
    D = 768, an untied [D, V] head and F.cross_entropy, at B = 4, T = 64 and B = 1, T = 1024."""
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1, self.ln_2 = nn.LayerNorm(D), nn.LayerNorm(D)
            self.c_attn, self.attn_proj = nn.Linear(D, 3 * D), nn.Linear(D, D)
            self.c_fc, self.mlp_proj = nn.Linear(D, 4 * D), nn.Linear(4 * D, D)

        def forward(self, x):
            b, t, _ = x.shape
            q, k, v = (z.view(b, t, 12, D // 12).transpose(1, 2)
                       for z in self.c_attn(self.ln_1(x)).split(D, dim=2))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            x = x + self.attn_proj(y.transpose(1, 2).reshape(b, t, D))
            return x + self.mlp_proj(F.gelu(self.c_fc(self.ln_2(x)), approximate="tanh"))

    class Gpt(nn.Module):
        def __init__(self):
            super().__init__()
            self.tok, self.pos = nn.Embedding(V, D), nn.Embedding(T, D)
            self.blocks = nn.ModuleList(Block() for _ in range(15))
            self.ln_f = nn.LayerNorm(D)
            self.head = nn.Parameter(torch.randn(D, V) / D ** 0.5)

        def forward(self, ids):
            x = self.tok(ids) + self.pos(torch.arange(ids.shape[1]))
            for block in self.blocks:
                x = block(x)
            return self.ln_f(x) @ self.head

    model = Gpt()
    assert sum(p.numel() for p in model.parameters()) == 120_083_712
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)
    for batch, length in ((4, 64), (1, 1024)):
        name = f"gpt_train_step.T{length}"
        if name_filter not in name + ".peak_memory" and name_filter not in name + ".peak_resident":
            continue
        ids = torch.randint(0, V, (batch, length))
        targets = torch.randint(0, V, (batch, length))

        def step():
            F.cross_entropy(model(ids).view(-1, V), targets.view(-1)).backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)

        step()  # AdamW's state exists from here on, as in a run
        growth = peak_growth_mib(step)
        t = timed(step, reps)
        record(name, batch, t)
        memory = record(name + ".peak_memory", batch, t, "MiB")
        memory["achieved"] = growth
        resident = record(name + ".peak_resident", batch, t, "MiB")
        resident["achieved"] = status_bytes("VmHWM") / 2**20


def attention_records(batch, reps, record):
    """Causal attention at ANDREA's sizes, q, k, v the heads of one [B, T, 3D] projection: the
    fused F.scaled_dot_product_attention and the same attention composed of separate ops, as
    minigraph bench's attention.fused and attention.composed rows."""
    import torch
    import torch.nn.functional as F

    heads, head_size = 12, D // 12
    qkv = torch.randn(batch, T, 3 * D, requires_grad=True)
    q, k, v = (t.permute(0, 2, 1, 3) for t in qkv.view(batch, T, 3, heads, head_size).unbind(2))
    grad_out = torch.randn(batch, heads, T, head_size)
    future = torch.ones(T, T, dtype=torch.bool).triu(1)

    def composed():
        scores = (q @ k.transpose(-1, -2)) * head_size ** -0.5
        return torch.softmax(scores.masked_fill(future, float("-inf")), -1) @ v

    paths = {"fused": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True),
             "composed": composed}
    for name, forward in paths.items():
        def fwd_bwd():
            qkv.grad = None
            forward().backward(grad_out)

        record(f"attention.{name}.forward", batch, timed(forward, reps))
        growth = peak_growth_mib(fwd_bwd)
        t = timed(fwd_bwd, reps)
        record(f"attention.{name}.fwd_bwd", batch, t)
        memory = record(f"attention.{name}.peak_memory", batch, t, "MiB")
        memory["achieved"] = growth


def machine_busy_s():
    """Seconds all cores spent busy since boot (user, nice, system, irq, softirq, steal)."""
    with open("/proc/stat") as stat:
        fields = [int(v) for v in stat.readline().split()[1:9]]
    user, nice, system, _idle, _iowait, irq, softirq, steal = fields
    return (user + nice + system + irq + softirq + steal) / os.sysconf("SC_CLK_TCK")


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_workers(thread_counts, batches, reps, name_filter):
    records = []
    for threads in thread_counts:
        env = dict(os.environ, OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
                   MKL_NUM_THREADS=str(threads))
        out = subprocess.run(
            [sys.executable, __file__, "--worker", "--threads", str(threads),
             "--batch", ",".join(map(str, batches)), "--reps", str(reps),
             "--filter", name_filter],
            env=env, check=True, capture_output=True, text=True).stdout
        records += json.loads(out)
    return records


def compare(minigraph, torch_records):
    """Pairs records by (name, threads, batch): minigraph / torch time, and torch's rate on
    minigraph's scale (the same work, so rate * minigraph time / torch time)."""
    ours = {(r["name"], r["threads"], r["batch"]): r for r in minigraph}
    rows = []
    for t in torch_records:
        m = ours.get((t["name"], t["threads"], t["batch"]))
        row = {"name": t["name"], "threads": t["threads"], "batch": t["batch"],
               "torch_median_ms": t["median_ms"], "minigraph_median_ms": None, "ratio": None}
        if t["unit"] in ("us", "faults/step", "MiB"):  # a figure of its own, not a time
            row["minigraph"], row["torch"] = None, t.get("achieved")
            row["unit"] = t["unit"]
        if m is not None:
            if t["unit"] in ("us", "faults/step", "MiB"):
                row["minigraph"] = m["achieved"]
                row["ratio"] = m["achieved"] / t["achieved"] if t["achieved"] else None
            else:
                row["ratio"] = m["median_ms"] / t["median_ms"]
                if m["unit"] in ("GB/s", "GFLOP/s"):
                    t["achieved"] = m["achieved"] * m["median_ms"] / t["median_ms"]
                    t["unit"] = m["unit"]
                    if m.get("limit_pct") is not None:
                        t["limit_pct"] = m["limit_pct"] * m["median_ms"] / t["median_ms"]
            row["minigraph_median_ms"] = m["median_ms"]
        rows.append(row)
    return rows


def print_table(rows):
    print(f"{'name':<40} {'thr':>3} {'B':>2} {'minigraph':>18} {'PyTorch':>18} "
          f"{'mg / torch':>10}")
    for r in rows:
        batch = "-" if r["batch"] is None else str(r["batch"])
        if r.get("unit") in ("us", "faults/step", "MiB"):
            unit = r["unit"]
            digits = 0 if unit in ("faults/step", "MiB") else 2
            mg = "-" if r["minigraph"] is None else f"{r['minigraph']:.{digits}f} {unit}"
            th = "-" if r["torch"] is None else f"{r['torch']:.{digits}f} {unit}"
        else:
            mg = "-" if r["minigraph_median_ms"] is None else f"{r['minigraph_median_ms']:.3f} ms"
            th = f"{r['torch_median_ms']:.3f} ms"
        ratio = "-" if r["ratio"] is None else f"{r['ratio']:.2f}"
        print(f"{r['name']:<40} {r['threads']:>3} {batch:>2} {mg:>18} {th:>18} {ratio:>10}")


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--minigraph", help="JSON written by `minigraph bench --json`")
    parser.add_argument("--threads", help="thread counts, e.g. 1,2 (default: those of "
                        "--minigraph, else 1 and all cores)")
    parser.add_argument("--batch", help="batch sizes (default: those of --minigraph, else 1,8)")
    parser.add_argument("--reps", type=int, default=5)
    parser.add_argument("--filter", default="",
                        help="only the work whose names contain this, as minigraph bench's")
    parser.add_argument("--json", help="write torch's records and the comparison here")
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()

    parse = lambda text: [int(v) for v in text.split(",")]
    if args.worker:
        json.dump(worker(parse(args.threads)[0], parse(args.batch), args.reps, args.filter),
                  sys.stdout)
        return

    minigraph, meta = [], {}
    if args.minigraph:
        with open(args.minigraph) as f:
            meta = json.load(f)
        minigraph = meta["records"]
    threads = parse(args.threads) if args.threads else sorted(
        {r["threads"] for r in minigraph} or {1, len(os.sched_getaffinity(0))})
    batches = parse(args.batch) if args.batch else sorted(
        {r["batch"] for r in minigraph if r["batch"] is not None} or {1, 8})
    import torch  # only for the version; the workers do the work
    print(f"PyTorch {torch.__version__}, BLAS {torch_blas(torch)}, on "
          f"{meta.get('machine', 'this machine')}\nminigraph GEMM: {meta.get('gemm_library', '-')}\n")
    busy, ours, start = machine_busy_s(), children_cpu_s(), time.monotonic()
    torch_records = run_workers(threads, batches, args.reps, args.filter)
    # Other processes' CPU use while the workers ran, in cores on average (as minigraph bench
    # reports it): figures taken beside a build read low.
    other_load = max(0.0, ((machine_busy_s() - busy) - (children_cpu_s() - ours))
                     / (time.monotonic() - start))
    rows = compare(minigraph, torch_records)
    print_table(rows)
    print(f"\nother processes kept {other_load:.2f} of {len(os.sched_getaffinity(0))} cores busy "
          f"during the PyTorch runs{': the figures read low' if other_load > 0.05 else ''}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"torch_version": torch.__version__, "torch_blas": torch_blas(torch),
                       "other_load_cores": other_load,
                       "records": torch_records, "comparison": rows}, f, indent=2)
        print(f"\nwrote {len(torch_records)} records to {args.json}")


if __name__ == "__main__":
    main()
