// add on the CPU: flat loops split across threads for equal shapes and for the common
// [..., T, D] + [T, D] broadcast (and a scalar operand); a strided loop for every other
// broadcast.
#include <algorithm>
#include <vector>

#include "common/broadcast.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T>
void add_broadcast_loop(const Tensor& a, const Tensor& b, Tensor& out) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  for_each_broadcast(
      out.shape(), broadcast_strides(a.shape(), out.shape()),
      broadcast_strides(b.shape(), out.shape()),
      [&](std::int64_t i, std::int64_t ia, std::int64_t ib) { po[i] = pa[ia] + pb[ib]; });
}

// out[i] = full[i] + part[i % block] for i in [0, n): the part repeats over leading axes
// (block == n: equal shapes; block == 1: a scalar), in contiguous ranges across threads.
template <typename T>
void add_repeated(const T* full, const T* part, std::int64_t block, T* out, std::int64_t n) {
  const int parts = threads_for(n);
  parallel_for(parts, [&](int thread_part) {
    const Range r = part_range(n, parts, thread_part);
    if (block == 1) {
      const T p = part[0];
      for (std::int64_t i = r.begin; i < r.end; ++i) out[i] = full[i] + p;
      return;
    }
    for (std::int64_t i = r.begin; i < r.end;) {
      const std::int64_t j = i % block, run = std::min(r.end - i, block - j);
      for (std::int64_t k = 0; k < run; ++k) out[i + k] = full[i + k] + part[j + k];
      i += run;
    }
  });
}

}  // namespace

void add_cpu(const KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const std::int64_t n = out.numel();
    // One operand full-size, the other equal or repeated over leading axes.
    const bool a_full = a.numel() == n && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = b.numel() == n && is_leading_broadcast(a.shape(), out.shape());
    if ((a_full || b_full) && n > 0) {
      const Tensor& full = a_full ? a : b;
      const Tensor& part = a_full ? b : a;
      add_repeated<T>(full.data<T>(), part.data<T>(), part.numel(), out.data<T>(), n);
      return;
    }
    add_broadcast_loop<T>(a, b, out);
  });
}

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
