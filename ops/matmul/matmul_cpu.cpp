// matmul on the CPU: one GEMM call on mapped memory, with transpose flags instead of
// transposed copies (an input that comes as a transposed view flips its flag), through
// mg::cpu::gemm (the library chosen at configure time, with the kernels for this CPU). A shared b
// folds the batch into the rows of a (one [B*M, K] x [K, N] product); otherwise one product per
// batch entry.
#include "matmul/matmul.h"
#include "minigraph/cpu.h"
#include "minigraph/op.h"

namespace mg {

namespace {

struct GemmShape {
  std::int64_t batch, m, n, k;
  bool transpose_a, transpose_b;  // the flags, flipped for an input that comes transposed
  bool fold_batch;                // b shared and a not transposed: one product of batch * m rows
};

GemmShape gemm_shape(const KernelContext& ctx) {
  const auto& o = ctx.attrs_as<MatmulOptions>();
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  GemmShape s;
  s.m = ctx.out.size(-2);
  s.n = ctx.out.size(-1);
  s.k = a.size(o.transpose_a ? -2 : -1);
  s.batch = s.m * s.n == 0 ? 0 : ctx.out.numel() / (s.m * s.n);
  // A non-contiguous input is a transposed contiguous one (the op's takes_layout).
  s.transpose_a = o.transpose_a != !a.is_contiguous();
  s.transpose_b = o.transpose_b != !b.is_contiguous();
  s.fold_batch = b.dim() == 2 && !s.transpose_a;
  return s;
}

}  // namespace

void matmul_cpu(const KernelContext& ctx) {
  const GemmShape s = gemm_shape(ctx);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* a = ctx.inputs[0].data_ptr<T>();
    const T* b = ctx.inputs[1].data_ptr<T>();
    T* c = ctx.out.data<T>();
    if (s.fold_batch) {
      cpu::gemm<T>(a, b, c, s.batch * s.m, s.n, s.k, false, s.transpose_b);
      return;
    }
    const std::int64_t b_stride = ctx.inputs[1].dim() > 2 ? s.k * s.n : 0;
    for (std::int64_t i = 0; i < s.batch; ++i) {
      cpu::gemm<T>(a + i * s.m * s.k, b + i * b_stride, c + i * s.m * s.n, s.m, s.n, s.k,
                   s.transpose_a, s.transpose_b);
    }
  });
}

// The naive reference, written apart from the kernel (no GemmShape, no GEMM): the output
// shape from the inputs' own shapes, then one dot product per output element, summed in double.
//   a [..., M, K] (transpose_a: [..., K, M]); b [K, N] or [..., K, N] (transpose_b: [.., N, K])
Tensor matmul_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const auto& o = attrs_as<MatmulOptions>("matmul", attrs);
  const Tensor& a = inputs[0];
  const Tensor& b = inputs[1];
  const Shape& sa = a.shape();
  const Shape& sb = b.shape();
  const std::size_t ra = sa.size(), rb = sb.size();
  const std::int64_t m = o.transpose_a ? sa[ra - 1] : sa[ra - 2];
  const std::int64_t k = o.transpose_a ? sa[ra - 2] : sa[ra - 1];
  const std::int64_t n = o.transpose_b ? sb[rb - 2] : sb[rb - 1];
  Shape shape(sa.begin(), sa.end() - 2);  // a's batch axes
  shape.push_back(m);
  shape.push_back(n);
  Tensor out = Tensor::empty(shape, a.dtype());
  const bool b_per_batch = rb > 2;
  dispatch_float(a.dtype(), [&]<typename T>() {
    const T* pa = a.data<T>();
    const T* pb = b.data<T>();
    T* pc = out.data<T>();
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      const std::int64_t j = flat % n, i = (flat / n) % m, batch = flat / (m * n);
      const T* ab = pa + batch * m * k;                      // this batch entry of a
      const T* bb = pb + (b_per_batch ? batch * k * n : 0);  // of b, or the shared b
      double sum = 0;
      for (std::int64_t p = 0; p < k; ++p) {
        const double x = o.transpose_a ? ab[p * m + i] : ab[i * k + p];  // op(a)[i, p]
        const double y = o.transpose_b ? bb[j * k + p] : bb[p * n + j];  // op(b)[p, j]
        sum += x * y;
      }
      pc[flat] = static_cast<T>(sum);
    }
  });
  return out;
}

}  // namespace mg
