// The machine's limits, measured the same way at each thread count: large-array copy
// bandwidth (memcpy, bytes read + written per second) and the FMA peak (independent
// fused multiply-adds in registers, the widest vectors the CPU has), plus raw library work
// without the framework (memcpy, a bare GEMM) to put each measurement beside.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "measure.h"

namespace mg::bench {

std::string cpu_model();  // "AMD EPYC 9R14 ..." from /proc/cpuinfo
int cpu_cores();          // cores this process may run on

// A limit is what the machine can do, not what it usually does: the rate of the best of
// `reps` repetitions, beside the timing of all of them.
struct Limit {
  double rate;
  Timing timing;
};
Limit copy_bandwidth_gbs(int threads, int reps);  // GB/s (read + write)
Limit fma_peak_gflops(int threads, int reps);     // GFLOP/s, f32

struct FreeBuffer {
  void operator()(char* ptr) const;
};
// A buffer outside minigraph's allocator (so raw work never counts in its memory figures),
// backed by huge pages where the system has them, as minigraph's large tensors are.
std::unique_ptr<char[], FreeBuffer> huge_page_buffer(std::size_t bytes);

// memcpy of `bytes` split across `threads`; the buffers are touched once, run() only copies.
class RawCopy {
 public:
  RawCopy(std::size_t bytes, int threads);
  void run() const;

 private:
  std::size_t bytes_;
  int threads_;
  std::unique_ptr<char[], FreeBuffer> src_, dst_;
};

// C [m, n] = op(A) op(B), row-major f32, through mg::cpu::gemm (the GEMM library and kernels
// that matmul runs) directly on huge-page buffers made once.
class RawGemm {
 public:
  RawGemm(std::int64_t m, std::int64_t n, std::int64_t k, bool transpose_a, bool transpose_b);
  void run();

 private:
  float* a() { return reinterpret_cast<float*>(a_.get()); }
  float* b() { return reinterpret_cast<float*>(b_.get()); }
  float* c() { return reinterpret_cast<float*>(c_.get()); }

  std::int64_t m_, n_, k_;
  bool ta_, tb_;
  std::unique_ptr<char[], FreeBuffer> a_, b_, c_;
};

}  // namespace mg::bench
