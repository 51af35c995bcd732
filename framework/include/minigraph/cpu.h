// Statistics of the CPU backend's caching allocator. Tensor memory freed on the CPU is kept
// and handed to the next tensor of the same size, because touching fresh memory costs a page
// fault per 4 KiB (about twelve times the cost of rewriting mapped memory): a training step in
// steady state takes no memory from the system at all. Also: the available memory, and the
// GEMM library behind matmul, and the vector instructions kernels use. Threads: see
// minigraph/threads.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace mg::cpu {

struct MemoryStats {
  std::size_t system_allocations = 0;   // blocks taken from the system so far: flat in steady state
  std::size_t reserved_bytes = 0;       // held from the system: in use plus cached
  std::size_t in_use_bytes = 0;         // held by live tensors
  std::size_t peak_reserved_bytes = 0;  // since the start or the last reset_peak_memory_stats()
  std::size_t peak_in_use_bytes = 0;
};

MemoryStats memory_stats();
// Starts the peaks afresh at the current values, to measure the peak of one piece of work.
void reset_peak_memory_stats();
// Returns the cached (unused) blocks to the system.
void empty_cache();

// Bytes this process can still get from the system: MemAvailable from /proc/meminfo, less
// where ulimit -v (RLIMIT_AS) or the cgroup's memory.max allows less. The allocator refuses
// larger requests with an mg::Error (with overcommit, malloc would succeed and the process be
// killed on touching the pages); programs check their plans against it up front.
struct AvailableMemory {
  std::int64_t bytes = 0;
  std::string source;  // which bound it is: "MemAvailable", "ulimit -v", "cgroup memory.max"
  bool known = false;  // false where none can be read: then nothing is refused
};
AvailableMemory available_memory();

// C [m, n] = op(A) op(B) on row-major host memory, op a transpose where asked (A is [m, k], or
// [k, m] transposed; B is [k, n], or [n, k]), through the GEMM library minigraph was built
// with: what matmul's CPU kernel runs, for ops of your own. Throws mg::Error where the library
// takes int sizes and a size passes 2^31 - 1, or where the library cannot be loaded.
template <typename T>
void gemm(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
          bool transpose_a, bool transpose_b);
extern template void gemm<float>(const float*, const float*, float*, std::int64_t, std::int64_t,
                                 std::int64_t, bool, bool);
extern template void gemm<double>(const double*, const double*, double*, std::int64_t, std::int64_t,
                                  std::int64_t, bool, bool);
// The same product added to what c holds: C [m, n] += op(A) op(B) (BLAS beta = 1), for ops
// that sum a product over chunks (linear_cross_entropy's weight gradient) without a temporary.
template <typename T>
void gemm_accumulate(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k,
                     bool transpose_a, bool transpose_b);
extern template void gemm_accumulate<float>(const float*, const float*, float*, std::int64_t,
                                            std::int64_t, std::int64_t, bool, bool);
extern template void gemm_accumulate<double>(const double*, const double*, double*, std::int64_t,
                                             std::int64_t, std::int64_t, bool, bool);

// The widest vector instructions the CPU kernels of elementwise ops, softmax and layer_norm
// use: "avx512" where the CPU has AVX-512 (F, BW, VL and DQ), else "avx2" where it has AVX2
// and FMA, else "default" (the build's x86-64 baseline). Those loops are compiled once for
// each and picked at run time. All give the same bits: the ops compile with
// -ffp-contract=off, so no build fuses a multiply and an add on its own, and the fused
// multiply-adds written out (the exp of softmax and GELU) round once in every build (libm's
// fma in the baseline's). set_capability takes a narrower one, to measure it or to check
// that sameness; one the CPU lacks is an mg::Error.
std::string capability();
void set_capability(std::string_view capability);
enum class VectorIsa { baseline, avx2, avx512 };
// Which loops kernels take now (what ops/common/cpu_isa.h asks per call).
VectorIsa vector_isa();

}  // namespace mg::cpu

namespace mg {

// The library behind matmul on the CPU, chosen at configure time, with its version, the
// kernels that run on this CPU, who chose them and its threading: "OpenBLAS 0.3.21
// (Cooperlake kernels, chosen from the CPU's features: AVX-512 with BF16; OpenMP threads)",
// "BLIS 0.9.0 (skx kernels, ...)", or "Eigen 3.4.0 (no BLAS)". minigraph picks OpenBLAS's
// kernels from the CPU's features (AVX2 + FMA, AVX-512, AVX-512 BF16), not its model number,
// which an OpenBLAS release does not know for CPUs newer than itself; a user-set
// OPENBLAS_CORETYPE wins. Never throws: a library that cannot be loaded is described.
std::string gemm_library();
// The kernel family alone: OpenBLAS's core name ("SkylakeX", "Haswell", "Prescott"...), BLIS's
// configuration ("skx", "zen3"...), or "Eigen".
std::string gemm_kernels();

}  // namespace mg
