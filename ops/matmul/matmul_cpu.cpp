// matmul on the CPU: one GEMM call on mapped memory, through the BLAS library chosen at
// configure time (cblas, with BLAS's transpose flags) or Eigen's GEMM when none was found. A
// shared b folds the batch into the rows of a (one [B*M, K] x [K, N] product); otherwise one
// product per batch entry.
#if defined(MG_GEMM_OPENBLAS) || defined(MG_GEMM_BLIS)
#include <cblas.h>

#include <climits>
#define MG_GEMM_CBLAS
#else
#include <Eigen/Core>
#endif

#include "matmul/matmul.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

struct GemmShape {
  std::int64_t batch, m, n, k;
  bool fold_batch;  // b shared and a not transposed: one product of batch * m rows
};

GemmShape gemm_shape(const KernelContext& ctx) {
  const auto& o = attrs_as<MatmulOptions>(ctx.attrs);
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  GemmShape s;
  s.m = ctx.out.size(-2);
  s.n = ctx.out.size(-1);
  s.k = a.size(o.transpose_a ? -2 : -1);
  s.batch = s.m * s.n == 0 ? 0 : ctx.out.numel() / (s.m * s.n);
  s.fold_batch = b.dim() == 2 && !o.transpose_a;
  return s;
}

#ifdef MG_GEMM_CBLAS
// C [m, n] = op(A) op(B), row-major: the leading dimension of each is its stored row length.
template <typename T>
void gemm(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k, bool ta,
          bool tb) {
  if (m == 0 || n == 0) return;
  MG_CHECK(m <= INT_MAX && n <= INT_MAX && k <= INT_MAX, "matmul", "a",
           "GEMM sizes below 2^31 (cblas takes int)", "m {}, n {}, k {}", m, n, k);
  const auto trans_a = ta ? CblasTrans : CblasNoTrans, trans_b = tb ? CblasTrans : CblasNoTrans;
  const auto lda = std::max<std::int64_t>(1, ta ? m : k),
             ldb = std::max<std::int64_t>(1, tb ? k : n);
  if constexpr (std::is_same_v<T, float>) {
    cblas_sgemm(CblasRowMajor, trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, n);
  } else {
    cblas_dgemm(CblasRowMajor, trans_a, trans_b, m, n, k, 1.0, a, lda, b, ldb, 0.0, c, n);
  }
}
#else
template <typename T>
void gemm(const T* a, const T* b, T* c, std::int64_t m, std::int64_t n, std::int64_t k, bool ta,
          bool tb) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<const Matrix> A(a, ta ? k : m, ta ? m : k);
  Eigen::Map<const Matrix> B(b, tb ? n : k, tb ? k : n);
  Eigen::Map<Matrix> C(c, m, n);
  if (k == 0) {
    C.setZero();
  } else if (!ta && !tb) {
    C.noalias() = A * B;
  } else if (ta && !tb) {
    C.noalias() = A.transpose() * B;
  } else if (!ta && tb) {
    C.noalias() = A * B.transpose();
  } else {
    C.noalias() = A.transpose() * B.transpose();
  }
}
#endif

}  // namespace

void matmul_cpu(const KernelContext& ctx) {
  const auto& o = attrs_as<MatmulOptions>(ctx.attrs);
  const GemmShape s = gemm_shape(ctx);
  num_threads();  // the first call applies the thread setting to the BLAS pool
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    T* c = ctx.out.data<T>();
    if (s.fold_batch) {
      gemm<T>(a, b, c, s.batch * s.m, s.n, s.k, false, o.transpose_b);
      return;
    }
    const std::int64_t b_stride = ctx.inputs[1].dim() > 2 ? s.k * s.n : 0;
    for (std::int64_t i = 0; i < s.batch; ++i) {
      gemm<T>(a + i * s.m * s.k, b + i * b_stride, c + i * s.m * s.n, s.m, s.n, s.k, o.transpose_a,
              o.transpose_b);
    }
  });
}

void matmul_reference(const KernelContext& ctx) {
  const auto& o = attrs_as<MatmulOptions>(ctx.attrs);
  const GemmShape s = gemm_shape(ctx);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    T* c = ctx.out.data<T>();
    const std::int64_t b_stride = ctx.inputs[1].dim() > 2 ? s.k * s.n : 0;
    for (std::int64_t bi = 0; bi < s.batch; ++bi) {
      const T* ab = a + bi * s.m * s.k;
      const T* bb = b + bi * b_stride;
      for (std::int64_t i = 0; i < s.m; ++i) {
        for (std::int64_t j = 0; j < s.n; ++j) {
          double sum = 0;
          for (std::int64_t p = 0; p < s.k; ++p) {
            double x = o.transpose_a ? ab[p * s.m + i] : ab[i * s.k + p];
            double y = o.transpose_b ? bb[j * s.k + p] : bb[p * s.n + j];
            sum += x * y;
          }
          c[bi * s.m * s.n + i * s.n + j] = static_cast<T>(sum);
        }
      }
    }
  });
}

}  // namespace mg
