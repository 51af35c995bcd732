// matmul on the CPU: one GEMM call on mapped memory, with transpose flags instead of
// transposed copies, through mg::cpu::gemm (the library chosen at configure time, with the
// kernels for this CPU). A shared b folds the batch into the rows of a (one [B*M, K] x [K, N]
// product); otherwise one product per batch entry.
#include "matmul/matmul.h"
#include "minigraph/cpu.h"
#include "minigraph/op.h"

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

}  // namespace

void matmul_cpu(const KernelContext& ctx) {
  const auto& o = attrs_as<MatmulOptions>(ctx.attrs);
  const GemmShape s = gemm_shape(ctx);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    T* c = ctx.out.data<T>();
    if (s.fold_batch) {
      cpu::gemm<T>(a, b, c, s.batch * s.m, s.n, s.k, false, o.transpose_b);
      return;
    }
    const std::int64_t b_stride = ctx.inputs[1].dim() > 2 ? s.k * s.n : 0;
    for (std::int64_t i = 0; i < s.batch; ++i) {
      cpu::gemm<T>(a + i * s.m * s.k, b + i * b_stride, c + i * s.m * s.n, s.m, s.n, s.k,
                   o.transpose_a, o.transpose_b);
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
