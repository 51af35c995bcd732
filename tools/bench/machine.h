// The machine's limits, measured the same way at each thread count: large-array copy
// bandwidth (memcpy, bytes read + written per second) and the FMA peak (independent
// fused multiply-adds in registers, the widest vectors the CPU has), plus raw library work
// without the framework (memcpy, a bare GEMM) to put each measurement beside.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

namespace mg::bench {

std::string cpu_model();  // "AMD EPYC 9R14 ..." from /proc/cpuinfo
int cpu_cores();          // cores this process may run on

double copy_bandwidth_gbs(int threads, int reps);  // GB/s (read + write)
double fma_peak_gflops(int threads, int reps);      // GFLOP/s, f32

// memcpy of `bytes` split across `threads`; the buffers are made and touched once, run()
// only copies.
class RawCopy {
 public:
  RawCopy(std::size_t bytes, int threads);
  void run() const;

 private:
  std::size_t bytes_;
  int threads_;
  std::unique_ptr<char[]> src_, dst_;
};

// C [m, n] = op(A) op(B), row-major f32, by the same GEMM library as minigraph's matmul
// (cblas or Eigen), called directly on buffers made once.
class RawGemm {
 public:
  RawGemm(std::int64_t m, std::int64_t n, std::int64_t k, bool transpose_a, bool transpose_b);
  void run();

 private:
  std::int64_t m_, n_, k_;
  bool ta_, tb_;
  std::unique_ptr<float[]> a_, b_, c_;
};

}  // namespace mg::bench
