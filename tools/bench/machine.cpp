#include "machine.h"

#include <immintrin.h>
#include <omp.h>
#include <sched.h>
#include <sys/mman.h>

#include <algorithm>
#include <cstring>
#include <fstream>
#include <new>
#include <vector>

#include "measure.h"
#include "minigraph/cpu.h"

namespace mg::bench {

namespace {

// kAccumulators independent chains hide the FMA latency (4 cycles, 2 pipes: 8 in flight).
constexpr int kAccumulators = 12;

__attribute__((target("avx2,fma"))) float fma_chains_avx2(std::int64_t iterations) {
  __m256 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_set1_ps(0.001f * i);
  const __m256 scale = _mm256_set1_ps(0.9999f), shift = _mm256_set1_ps(0.0001f);
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm256_fmadd_ps(acc[i], scale, shift);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm256_add_ps(sum, acc[i]);
  float lanes[8];
  _mm256_storeu_ps(lanes, sum);
  return lanes[0];  // returned so that the loop is not optimised away
}

__attribute__((target("avx512f"))) float fma_chains_avx512(std::int64_t iterations) {
  __m512 acc[kAccumulators];
  for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_set1_ps(0.001f * i);
  const __m512 scale = _mm512_set1_ps(0.9999f), shift = _mm512_set1_ps(0.0001f);
  for (std::int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kAccumulators; ++i) acc[i] = _mm512_fmadd_ps(acc[i], scale, shift);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kAccumulators; ++i) sum = _mm512_add_ps(sum, acc[i]);
  float lanes[16];  // not _mm512_reduce_add_ps, which warns under GCC 12 (-Wuninitialized)
  _mm512_storeu_ps(lanes, sum);
  return lanes[0];
}

// GFLOP/s of `chains` (flops_per_iteration each iteration) run on every thread at once.
template <typename Chains>
Limit fma_rate(Chains chains, double flops_per_iteration, int threads, int reps) {
  constexpr std::int64_t kIterations = 20'000'000;  // ~0.1 s per thread at 100 GFLOP/s
  volatile float sink = 0;
  Timing t = time_reps(
      [&] {
        float sum = 0;
#pragma omp parallel num_threads(threads) reduction(+ : sum)
        sum += chains(kIterations);
        sink = sum;
      },
      reps);
  return {threads * kIterations * flops_per_iteration / (t.min_ms * 1e6), t};
}

}  // namespace

void FreeBuffer::operator()(char* ptr) const { std::free(ptr); }

std::unique_ptr<char[], FreeBuffer> huge_page_buffer(std::size_t bytes) {
  constexpr std::size_t kHugePage = std::size_t{2} << 20;
  const std::size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  auto* ptr = static_cast<char*>(std::aligned_alloc(kHugePage, std::max(rounded, kHugePage)));
  if (ptr == nullptr) throw std::bad_alloc();
  madvise(ptr, rounded, MADV_HUGEPAGE);
  return std::unique_ptr<char[], FreeBuffer>(ptr);
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0) return line.substr(line.find(':') + 2);
  }
  return "unknown CPU";
}

int cpu_cores() {
  cpu_set_t set;
  return sched_getaffinity(0, sizeof(set), &set) == 0 ? CPU_COUNT(&set) : 1;
}

Limit fma_peak_gflops(int threads, int reps) {
  Limit peak = fma_rate(fma_chains_avx2, kAccumulators * 8 * 2, threads, reps);
  if (__builtin_cpu_supports("avx512f")) {
    const Limit wide = fma_rate(fma_chains_avx512, kAccumulators * 16 * 2, threads, reps);
    if (wide.rate > peak.rate) peak = wide;
  }
  return peak;
}

RawCopy::RawCopy(std::size_t bytes, int threads)
    : bytes_(bytes),
      threads_(threads),
      src_(huge_page_buffer(bytes)),
      dst_(huge_page_buffer(bytes)) {
  std::memset(src_.get(), 1, bytes);
  std::memset(dst_.get(), 0, bytes);
}

void RawCopy::run() const {
  const std::size_t chunk = (bytes_ / threads_ + 63) / 64 * 64;
#pragma omp parallel for num_threads(threads_) schedule(static)
  for (int t = 0; t < threads_; ++t) {
    const std::size_t begin = std::min(bytes_, t * chunk), end = std::min(bytes_, begin + chunk);
    std::memcpy(dst_.get() + begin, src_.get() + begin, end - begin);
  }
}

Limit copy_bandwidth_gbs(int threads, int reps) {
  constexpr std::size_t kBytes = std::size_t{256} << 20;  // far beyond the caches
  const RawCopy copy(kBytes, threads);
  Timing t = time_reps([&] { copy.run(); }, reps);
  return {2.0 * kBytes / (t.min_ms * 1e6), t};
}

RawGemm::RawGemm(std::int64_t m, std::int64_t n, std::int64_t k, bool transpose_a, bool transpose_b)
    : m_(m),
      n_(n),
      k_(k),
      ta_(transpose_a),
      tb_(transpose_b),
      a_(huge_page_buffer(m * k * sizeof(float))),
      b_(huge_page_buffer(k * n * sizeof(float))),
      c_(huge_page_buffer(m * n * sizeof(float))) {
  std::fill(a(), a() + m * k, 0.01f);
  std::fill(b(), b() + k * n, 0.02f);
  std::fill(c(), c() + m * n, 0.0f);
}

void RawGemm::run() { cpu::gemm<float>(a(), b(), c(), m_, n_, k_, ta_, tb_); }

}  // namespace mg::bench
