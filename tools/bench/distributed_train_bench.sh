#!/usr/bin/env bash
# Data-parallel training on this machine, for docs/distributed.md: the steady step time of one
# process with one thread against 2 ranks with one thread each (mpirun), at the same global
# batch, at the lesson's size and at ANDREA-120M's, and at full size the gradient buckets of 1,
# 25 and 1024 MiB. Prints a table; not a test (timings belong in benchmarks).
#   tools/bench/distributed_train_bench.sh [build-dir]        (default: build)
set -euo pipefail
cd "$(dirname "$0")/../.."
build=${1:-build}
mg=$build/tools/minigraph
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
mpirun2=(mpirun -np 2 --mca btl self,vader,tcp --mca btl_tcp_if_include lo
         --mca oob_tcp_if_include lo --bind-to core)

# One tokenizer for every run (training it is not what is measured).
"$mg" train --steps 1 --eval-every 0 --checkpoint "$work/tok" > /dev/null
tok=$work/tok/latest/tokenizer.model

# Median seconds per step over steps [skip, steps] of a --json run's elapsed_s.
step_time() {
  python3 - "$1" "$2" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1]) if l.startswith("{")]
skip = int(sys.argv[2])
t = [r["elapsed_s"] for r in rows]
d = sorted(t[i] - t[i - 1] for i in range(skip, len(t)))
print(f"{d[len(d) // 2] * 1000:.1f}")
PY
}

run() {  # name steps skip args...
  local name=$1 steps=$2 skip=$3
  shift 3
  "$mg" train --threads 1 --tokenizer "$tok" --steps "$steps" --eval-every 0 --json "$@" \
    > "$work/one.json"
  "${mpirun2[@]}" "$mg" train --threads 1 --tokenizer "$tok" --steps "$steps" --eval-every 0 \
    --json "$@" > "$work/two.json"
  local one two
  one=$(step_time "$work/one.json" "$skip")
  two=$(step_time "$work/two.json" "$skip")
  printf '| %s | %s ms | %s ms | %s |\n' "$name" "$one" "$two" \
    "$(python3 -c "print(f'{$one / $two:.2f}x')")"
}

echo "| size (global batch) | 1 process, 1 thread | 2 ranks, 1 thread each | speed-up |"
echo "|---|---|---|---|"
run "lesson: D 64, T 32, B 16" 60 10
run "ANDREA-120M: D 768, T 1024, B 8" 10 2 --d-model 768 --context 1024 --batch 8
for mib in 1 25 1024; do
  "${mpirun2[@]}" "$mg" train --threads 1 --tokenizer "$tok" --steps 10 --eval-every 0 --json \
    --d-model 768 --context 1024 --batch 8 --bucket-mib "$mib" > "$work/b.json"
  echo "| ANDREA-120M, 2 ranks, buckets of $mib MiB | | $(step_time "$work/b.json" 2) ms | |"
done
