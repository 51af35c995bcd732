#!/usr/bin/env bash
# On a machine with an NVIDIA GPU (sm_90 or newer; the build carries sm_90 code plus PTX):
# build minigraph with the CUDA backend, run the whole test suite with the GPU tests live, and
# benchmark the ANDREA input layer + head forward and backward (B = 8, T = 1024), then train the
# lesson's model on the GPU for 200 steps and once at ANDREA-120M's size for 20 (tokens/s).
# The suite includes the single-process, single-GPU NCCL communicator (distributed_nccl_one_gpu).
# Fails if a test was skipped, since here each one should run. About 3-5 minutes on 16 cores.
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
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release -DMINIGRAPH_CUDA=ON \
  -DMINIGRAPH_NCCL=ON
cmake --build "$build_dir" -j"$jobs"

log="$build_dir/gpu-check-ctest.log"
# The sanitized CPU suite (minutes of CPU build, nothing of the GPU) is CI's: left out here.
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" --timeout 300 -LE sanitize | tee "$log"
# With a GPU present every registered test runs: CUDA tests are registered only where they can
# run, and CudaUnavailable.NoGpuHere, the one test a CUDA build registers without a GPU, skips.
skipped=$(sed -n '/The following tests did not run/,$p' "$log" | grep -E '^\s+[0-9]+ - ' || true)
if [ -n "$skipped" ]; then
  echo "gpu-check: tests skipped although a GPU is present:" >&2
  echo "$skipped" >&2
  exit 1
fi

"$build_dir/tools/gpu_bench"

# Training on the device: every op of the step (fused head + loss, clipping, AdamW) on CUDA.
"$build_dir/tools/minigraph" train --device cuda --steps 200 --eval-every 100
"$build_dir/tools/minigraph" train --device cuda --d-model 768 --context 1024 --batch 8 \
  --steps 20 --eval-every 0
