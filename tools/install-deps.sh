#!/usr/bin/env bash
# Installs the Debian packages minigraph builds with, when any is missing (as root, or via sudo).
# The CUDA toolkit is optional and not installed here: without nvcc the CUDA backend is left out.
set -euo pipefail
packages=(cmake ninja-build g++ libeigen3-dev libfmt-dev libgtest-dev libbenchmark-dev
          libcli11-dev nlohmann-json3-dev libopenblas-dev libopenblas-openmp-dev graphviz
          pkgconf libsentencepiece-dev  # pkgconf: pkg-config (SentencePiece, minigraph.pc)
          libopenmpi-dev openmpi-bin    # data-parallel training: the MPI communicator, mpirun
          clang libclang-rt-dev libomp-dev)  # the fuzz tests: libFuzzer, its sanitizers, OpenMP
missing=()
for p in "${packages[@]}"; do
  dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "installing: ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
