// Loops compiled three times on x86-64: for the baseline the build targets (SSE2: the library
// runs on any x86-64), for AVX2 and for AVX-512, the widest the CPU has taken while
// mg::cpu::vector_isa() names it (twice the lanes each step: GELU 45 -> 21 ms for 16 M floats
// on a Zen 4 core with AVX2). The compiler fuses no multiply and add in any (the ops compile
// with -ffp-contract=off); those written out (common/fast_math.h) round once in all, so all
// give the same bits (minigraph/cpu.h).
#pragma once

#include "minigraph/cpu.h"

namespace mg {

// body() with every call inside it inlined (flatten) and compiled for AVX2 + FMA, or AVX-512 with
// 512-bit vectors; call them only where the CPU has it. Keep bodies to loops over raw
// pointers: whatever they call is inlined.
template <typename Body>
[[gnu::target("avx2,fma"), gnu::flatten]] void run_avx2(const Body& body) {
  body();
}
#if defined(__clang__)  // clang's target attribute takes no vector width (nor needs one)
#define MG_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,fma"
#else
#define MG_AVX512_TARGET "avx512f,avx512bw,avx512vl,avx512dq,fma,prefer-vector-width=512"
#endif
template <typename Body>
[[gnu::target(MG_AVX512_TARGET), gnu::flatten]] void run_avx512(const Body& body) {
  body();
}
#undef MG_AVX512_TARGET

// body(), in the build for the ISA kernels take now (where the baseline lacks it).
template <typename Body>
void run_vectorized(const Body& body) {
#if defined(__x86_64__) && !defined(__AVX2__)
  switch (cpu::vector_isa()) {
    case cpu::VectorIsa::avx512:
      return run_avx512(body);
    case cpu::VectorIsa::avx2:
      return run_avx2(body);
    case cpu::VectorIsa::baseline:
      break;
  }
#endif
  body();
}

}  // namespace mg
