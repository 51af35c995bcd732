// sum_to on the CPU: an Eigen column sum when the target repeats over leading axes (the
// [B, T, D] -> [T, D] of the position gradient), a strided loop otherwise.
#include <Eigen/Core>

#include "common/broadcast.h"
#include "minigraph/op.h"
#include "sum_to/sum_to.h"

namespace mg {

namespace {

template <typename T>
void sum_to_loop(const Tensor& x, Tensor& out) {
  const T* px = x.data<T>();
  T* po = out.data<T>();
  std::fill(po, po + out.numel(), T(0));
  // Iterate over x; the "b" strides map each element of x to its slot in out.
  auto strides_out = broadcast_strides(out.shape(), x.shape());
  for_each_broadcast(x.shape(), strides_out, strides_out,
                     [&](std::int64_t i, std::int64_t io, std::int64_t) { po[io] += px[i]; });
}

}  // namespace

void sum_to_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const std::int64_t inner = out.numel();
    if (inner > 0 && is_leading_broadcast(attrs_as<SumToAttrs>(ctx.attrs).shape, x.shape())) {
      using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
      Eigen::Map<const Matrix> rows(x.data<T>(), x.numel() / inner, inner);
      Eigen::Map<Eigen::Matrix<T, 1, Eigen::Dynamic>>(out.data<T>(), inner) = rows.colwise().sum();
      return;
    }
    sum_to_loop<T>(x, out);
  });
}

void sum_to_reference(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() { sum_to_loop<T>(ctx.inputs[0], ctx.out); });
}

}  // namespace mg
