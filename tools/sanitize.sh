#!/usr/bin/env bash
# Builds the CPU test suite with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer
# and runs it: any report (an overflow, a use after free, undefined behaviour, a leak) fails
# the test it happens in. The CUDA backend is left out (its runtime and ASan do not mix), so is
# MPI (OpenMPI's own allocations at exit read as leaks; the communicator is tested in the normal
# suite, and its single-process path here), and so are the tests under `ulimit -v` (ASan's
# shadow memory needs terabytes of address space) and the fuzz tests (they build their own
# sanitized targets with clang). ctest runs this script too (sanitized_suite).
#   tools/sanitize.sh [build-dir]      (default: build-sanitize)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build-sanitize}

# -fno-sanitize-recover: UBSan stops at its first report instead of printing and going on.
flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DMINIGRAPH_CUDA=OFF \
  -DMINIGRAPH_MPI=OFF \
  -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
  -DCMAKE_SHARED_LINKER_FLAGS="$flags"
cmake --build "$build_dir"

export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
ctest --test-dir "$build_dir" --output-on-failure -j2 -LE 'fuzz|ulimit|sanitize' --timeout 600
