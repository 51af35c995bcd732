// sum on the CPU: sum_to's reduction (threaded, deterministic) written into out viewed in the
// keep shape, which has out's elements in out's order.
#include "minigraph/op.h"
#include "sum/reduce_dims.h"
#include "sum/sum.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

void sum_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const auto& a = ctx.attrs_as<SumAttrs>();
  sum_to_cpu_into(x, ctx.out.view(reduce_shapes("sum", x.shape(), a.dims, a.keepdim).keep));
}

// The naive reference, written apart from the kernel (nothing from reduce_dims.h or sum_to):
// mark the summed axes, work the output shape out, then give each output element the sum, in
// x's row-major order, of the elements of x whose kept indices equal its own.
Tensor sum_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const auto& a = attrs_as<SumAttrs>("sum", attrs);
  const Shape& x_shape = x.shape();
  const std::int64_t rank = static_cast<std::int64_t>(x_shape.size());
  std::vector<bool> summed(x_shape.size(), a.dims.empty());
  for (std::int64_t axis : a.dims) {
    if (rank == 0) continue;  // a scalar's axis 0 or -1: nothing to sum over
    summed[axis < 0 ? axis + rank : axis] = true;
  }
  Shape shape;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (!summed[k]) {
      shape.push_back(x_shape[k]);
    } else if (a.keepdim) {
      shape.push_back(1);
    }
  }
  Tensor out = Tensor::empty(shape, x.dtype());
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    std::vector<std::int64_t> x_index(x_shape.size()), out_index(shape.size());
    for (std::int64_t j = 0; j < out.numel(); ++j) {
      std::int64_t rest = j;  // row-major: the last axis varies fastest
      for (std::size_t k = shape.size(); k-- > 0;) {
        out_index[k] = rest % shape[k];
        rest /= shape[k];
      }
      double sum = 0;
      for (std::int64_t i = 0; i < x.numel(); ++i) {
        rest = i;
        for (std::size_t k = x_shape.size(); k-- > 0;) {
          x_index[k] = rest % x_shape[k];
          rest /= x_shape[k];
        }
        // Walk x's axes and out's together: a summed axis has no out axis (or one of size 1).
        bool match = true;
        std::size_t o = 0;
        for (std::size_t k = 0; k < x_shape.size(); ++k) {
          if (summed[k]) {
            o += a.keepdim ? 1 : 0;
          } else {
            match = match && x_index[k] == out_index[o++];
          }
        }
        if (match) sum += px[i];
      }
      po[j] = static_cast<T>(sum);
    }
  });
  return out;
}

}  // namespace mg
