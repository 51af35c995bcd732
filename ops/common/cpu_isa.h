// Loops compiled twice on x86-64: for the baseline the build targets (SSE2: the library runs on
// any x86-64) and for AVX2, taken while mg::cpu::avx2_enabled() (twice the lanes: GELU 45 -> 21
// ms for 16 M floats on a Zen 4 core). Without FMA, so both give the same bits (minigraph/cpu.h).
#pragma once

#include "minigraph/cpu.h"

namespace mg {

// body() with every call inside it inlined (flatten) and compiled for AVX2; call it only where
// the CPU has AVX2. Keep bodies to loops over raw pointers: whatever they call is inlined.
template <typename Body>
[[gnu::target("avx2"), gnu::flatten]] void run_avx2(const Body& body) {
  body();
}

// body(), in its AVX2 build where that is enabled and the baseline lacks it.
template <typename Body>
void run_vectorized(const Body& body) {
#if defined(__x86_64__) && !defined(__AVX2__)
  if (cpu::avx2_enabled()) return run_avx2(body);
#endif
  body();
}

}  // namespace mg
