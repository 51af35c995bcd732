#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (sm_90 or newer; the build carries sm_90 code plus PTX):
# build minigraph with the CUDA backend, run the whole test suite with the GPU tests live, and
# benchmark the ANDREA input layer + head forward and backward (B = 8, T = 1024). Fails if a
# test was skipped, since here each one should run. About 2-4 minutes on 16 cores.
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
# With a GPU present every registered test runs: CUDA tests are registered only where they can
# run, and CudaUnavailable.NoGpuHere, the one test a CUDA build registers without a GPU, skips.
skipped=$(sed -n '/The following tests did not run/,$p' "$log" | grep -E '^\s+[0-9]+ - ' || true)
if [ -n "$skipped" ]; then
  echo "gpu-check: tests skipped although a GPU is present:" >&2
  echo "$skipped" >&2
  exit 1
fi

"$build_dir/tools/gpu_bench"
