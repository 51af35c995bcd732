#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (sm_90 or newer; the build carries sm_90 code plus PTX):
# build minigraph with the CUDA backend, run the whole test suite with the GPU tests live, and
# benchmark the ANDREA input layer + head forward and backward (B = 8, T = 1024). Fails if a
# CUDA test was skipped, since here each one should run. About 2-4 minutes on 16 cores.
#   tools/gpu-check.sh [build-dir]      (default: build-gpu)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-gpu}
jobs=$(nproc)

if ! command -v nvidia-smi >/dev/null || ! nvidia-smi -L; then
  echo "gpu-check: no NVIDIA GPU visible (nvidia-smi -L failed)" >&2
  exit 1
fi

tools/install-deps.sh
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMINIGRAPH_CUDA=ON
cmake --build "$build_dir" -j"$jobs"

log="$build_dir/gpu-check-ctest.log"
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" --timeout 300 | tee "$log"
# Here no CUDA test of a built-in op (ops/op_list.h) or of test_cuda.cpp may skip. Op
# libraries without a CUDA kernel (examples/custom_op) still skip theirs, by design.
builtin_ops=$(sed -n 's/^MG_OP(\([a-z0-9_]*\)).*/\1/p' ops/op_list.h | paste -sd'|')
skipped=$(sed -n '/The following tests did not run/,$p' "$log" |
          grep -E "ops\.(${builtin_ops})_.*_cuda|Cuda\." || true)
if [ -n "$skipped" ]; then
  echo "gpu-check: CUDA tests skipped although a GPU is present:" >&2
  echo "$skipped" >&2
  exit 1
fi

"$build_dir/tools/gpu_bench"
