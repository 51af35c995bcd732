// add on the CPU: the binary elementwise engine (common/elementwise.cpp) with a + b, and the
// naive reference that the harness checks it against.
//   a [..A], b [..B] -> out [broadcast(A, B)]
#include <algorithm>
#include <vector>

#include "common/elementwise.h"
#include "minigraph/op.h"

namespace mg {

void add_cpu(const KernelContext& ctx) { elementwise_binary_cpu(ctx, BinaryOp::add); }

// The naive reference, written apart from the kernels above (no helper of theirs, nothing
// from common/broadcast.h): NumPy's broadcasting rule spelled out, then one plain loop over
// every output element.
Tensor add_reference(std::span<const Tensor> inputs, const std::any&) {
  const Shape& a = inputs[0].shape();
  const Shape& b = inputs[1].shape();
  // Align the shapes at their last axis; a missing axis counts as 1; each output axis is
  // the size that is not 1 (the shape rule has checked that they agree otherwise).
  const std::size_t rank = std::max(a.size(), b.size());
  Shape shape(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    const std::size_t from_end = rank - 1 - axis;
    const std::int64_t size_a = from_end < a.size() ? a[a.size() - 1 - from_end] : 1;
    const std::int64_t size_b = from_end < b.size() ? b[b.size() - 1 - from_end] : 1;
    shape[axis] = size_a == 1 ? size_b : size_a;
  }
  Tensor out = Tensor::empty(shape, inputs[0].dtype());
  // The element of an input at an output index: its own axes line up with the output's last
  // ones, and on a size-1 axis it always reads index 0.
  auto element = [&](const Shape& in, const std::vector<std::int64_t>& index) {
    std::int64_t flat = 0;
    for (std::size_t k = 0; k < in.size(); ++k) {
      const std::int64_t i = in[k] == 1 ? 0 : index[rank - in.size() + k];
      flat = flat * in[k] + i;
    }
    return flat;
  };
  dispatch_float(out.dtype(), [&]<typename T>() {
    const T* pa = inputs[0].data<T>();
    const T* pb = inputs[1].data<T>();
    T* po = out.data<T>();
    std::vector<std::int64_t> index(rank);
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      std::int64_t rest = flat;  // row-major: the last axis varies fastest
      for (std::size_t axis = rank; axis-- > 0;) {
        index[axis] = rest % shape[axis];
        rest /= shape[axis];
      }
      po[flat] = pa[element(a, index)] + pb[element(b, index)];
    }
  });
  return out;
}

}  // namespace mg
