#!/usr/bin/env bash
# Builds the CPU test suite with AddressSanitizer, UndefinedBehaviorSanitizer and LeakSanitizer
# and runs it: any report (an overflow, a use after free, undefined behaviour, a leak) fails
# the test it happens in. The CUDA backend is left out (its runtime and ASan do not mix), so is
# MPI (OpenMPI's own allocations at exit read as leaks; the communicator is tested in the normal
# suite, and its single-process path here), and so are the tests under `ulimit -v` (ASan's
# shadow memory needs terabytes of address space), the fuzz tests (they build their own
# sanitized targets with clang) and the CLI's checkpoint_faults runs (a minute of training runs
# killed on purpose; the same save code runs here in the Checkpoint tests). ctest runs this script too: sanitized_build, then
# sanitized_suite.
#   tools/sanitize.sh [--build-only | --test-only] [build-dir]      (default: build-sanitize)
#
# -O1 -g1 and a unity build (8 sources a unit): a quarter of the compile time of -O2 -g one file
# at a time (3,500 -> 600 CPU seconds on 2 cores), with ASan's line numbers still in every report;
# -O1 is what the sanitizers' authors advise. The normal build compiles each file alone, so a
# name two files both define stays an error there first.
set -euo pipefail
cd "$(dirname "$0")/.."
build=1 test=1
case "${1:-}" in
  --build-only) test=0; shift ;;
  --test-only) build=0; shift ;;
esac
build_dir=${1:-build-sanitize}

if ((build)); then
  # -fno-sanitize-recover: UBSan stops at its first report instead of printing and going on.
  flags="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer"
  cmake -S . -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1" -DCMAKE_UNITY_BUILD=ON \
    -DMINIGRAPH_CUDA=OFF -DMINIGRAPH_MPI=OFF \
    -DCMAKE_CXX_FLAGS="$flags" -DCMAKE_EXE_LINKER_FLAGS="$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS="$flags"
  cmake --build "$build_dir"
fi

if ((test)); then
  export ASAN_OPTIONS=detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1
  export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
  ctest --test-dir "$build_dir" --output-on-failure -j2 -LE 'fuzz|ulimit|checkpoint_faults|sanitize' --timeout 600
fi
