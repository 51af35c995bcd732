// The one cuBLAS wrapper: row-major products in a column-major library. Every CUDA matmul goes
// through gemm_row_major, so the operand swap that makes cuBLAS write a row-major result lives
// here and nowhere else.
#pragma once

#include <cublas_v2.h>

#include <cstdint>

#include "minigraph/dtype.h"

namespace mg::cuda {

[[noreturn]] void throw_cublas_error(cublasStatus_t status, const char* call, const char* file,
                                     int line);

inline void check_cublas(cublasStatus_t status, const char* call, const char* file, int line) {
  if (status != CUBLAS_STATUS_SUCCESS) [[unlikely]]
    throw_cublas_error(status, call, file, line);
}

// c[i] = op(a[i]) op(b[i]) for i < batch, every matrix row-major and contiguous:
//   op(a) [m, k] (stored [k, m] when transpose_a), op(b) [k, n] (stored [n, k] when
//   transpose_b), c [m, n]. Strides count elements between batch entries; 0 repeats an operand.
// accumulate: c[i] += op(a[i]) op(b[i]) (beta = 1), as a chunked weight gradient needs.
struct RowMajorGemm {
  DType dtype;  // f32 or f64, all three matrices
  bool transpose_a = false, transpose_b = false;
  std::int64_t m, n, k, batch = 1;
  const void* a;
  std::int64_t stride_a = 0;
  const void* b;
  std::int64_t stride_b = 0;
  void* c;
  std::int64_t stride_c = 0;
  bool accumulate = false;
};

// Queues the product on the handle's stream. f32 is exact f32 unless set_allow_tf32(true);
// f64 is f64. Throws mg::Error for sizes past cuBLAS's 32-bit dimensions.
void gemm_row_major(cublasHandle_t handle, const RowMajorGemm& gemm);

}  // namespace mg::cuda

#define MG_CUBLAS_CHECK(call) ::mg::cuda::check_cublas((call), #call, __FILE__, __LINE__)
