// Row-major GEMM through cuBLAS (see cublas_gemm.h).
//
// cuBLAS reads a row-major [r, c] matrix as its column-major transpose [c, r]. So for
// C = op(A) op(B) we ask it for Cᵀ = op(B)ᵀ op(A)ᵀ, with B first: what it writes column-major
// as Cᵀ [n, m] is C [m, n] row-major. A row-major operand stored untransposed is already the
// transpose cuBLAS needs (CUBLAS_OP_N); one stored transposed needs CUBLAS_OP_T.
#include "cublas_gemm.h"

#include <limits>

#include "minigraph/cuda.h"
#include "minigraph/error.h"

namespace mg::cuda {

namespace {

int as_int(std::int64_t value, const char* what) {
  MG_CHECK(value <= std::numeric_limits<int>::max(), "matmul", what,
           "at most 2^31 - 1 (cuBLAS's dimension limit)", "{}", value);
  return static_cast<int>(value);
}

}  // namespace

void gemm_row_major(cublasHandle_t handle, const RowMajorGemm& g) {
  const int m = as_int(g.m, "M"), n = as_int(g.n, "N"), k = as_int(g.k, "K");
  const int batch = as_int(g.batch, "batch");
  // Leading dimensions: the row length of each operand as stored.
  const int ld_a = g.transpose_a ? m : k;
  const int ld_b = g.transpose_b ? k : n;
  const cublasOperation_t op_a = g.transpose_a ? CUBLAS_OP_T : CUBLAS_OP_N;
  const cublasOperation_t op_b = g.transpose_b ? CUBLAS_OP_T : CUBLAS_OP_N;

  const bool f64 = g.dtype == DType::f64;
  const cudaDataType_t type = f64 ? CUDA_R_64F : CUDA_R_32F;
  const cublasComputeType_t compute = f64            ? CUBLAS_COMPUTE_64F
                                      : allow_tf32() ? CUBLAS_COMPUTE_32F_FAST_TF32
                                                     : CUBLAS_COMPUTE_32F;
  const double one64 = 1, zero64 = 0;
  const float one32 = 1, zero32 = 0;
  const void* alpha = f64 ? static_cast<const void*>(&one64) : &one32;
  const void* beta = f64 ? static_cast<const void*>(g.accumulate ? &one64 : &zero64)
                         : (g.accumulate ? &one32 : &zero32);
  MG_CUBLAS_CHECK(cublasGemmStridedBatchedEx(
      handle, op_b, op_a, n, m, k, alpha, g.b, type, ld_b, g.stride_b, g.a, type, ld_a, g.stride_a,
      beta, g.c, type, n, g.stride_c, batch, compute, CUBLAS_GEMM_DEFAULT));
}

}  // namespace mg::cuda
