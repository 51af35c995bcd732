// broadcast_to on the CPU: when x repeats over leading axes (a scalar, or [T, D] to
// [B, T, D]), contiguous copies split across threads; otherwise a strided loop.
#include <algorithm>
#include <vector>

#include "broadcast_to/broadcast_to.h"
#include "common/broadcast.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T>
void broadcast_loop(const Tensor& x, Tensor& out) {
  const T* px = x.data<T>();
  T* po = out.data<T>();
  const auto strides = broadcast_strides(x.shape(), out.shape());
  for_each_broadcast(out.shape(), strides, strides,
                     [&](std::int64_t i, std::int64_t ix, std::int64_t) { po[i] = px[ix]; });
}

// out[i] = x[i % block] for i in [0, n), in contiguous ranges across threads.
template <typename T>
void repeat_block(const T* x, std::int64_t block, T* out, std::int64_t n) {
  const int parts = threads_for(n);
  parallel_for(parts, [&](int thread_part) {
    const Range r = part_range(n, parts, thread_part);
    if (block == 1) {
      std::fill(out + r.begin, out + r.end, x[0]);
      return;
    }
    for (std::int64_t i = r.begin; i < r.end;) {
      const std::int64_t j = i % block, run = std::min(r.end - i, block - j);
      std::copy(x + j, x + j + run, out + i);
      i += run;
    }
  });
}

}  // namespace

void broadcast_to_cpu(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    if (out.numel() > 0 && is_leading_broadcast(x.shape(), out.shape())) {
      repeat_block<T>(x.data<T>(), x.numel(), out.data<T>(), out.numel());
      return;
    }
    broadcast_loop<T>(x, out);
  });
}

// The naive reference, written apart from the kernels above (no helper of theirs, nothing
// from common/broadcast.h): the output has the target shape, and each of its elements reads
// the element of x that NumPy's rule names: x's axes line up with the target's last ones, and
// on an axis where x has size 1 it reads index 0.
Tensor broadcast_to_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const Shape& shape = attrs_as<BroadcastToAttrs>("broadcast_to", attrs).shape;
  const Shape& x_shape = x.shape();
  Tensor out = Tensor::empty(shape, x.dtype());
  const std::size_t lead = shape.size() - x_shape.size();  // target axes x lacks
  dispatch_float(x.dtype(), [&]<typename T>() {
    const T* px = x.data<T>();
    T* po = out.data<T>();
    std::vector<std::int64_t> index(shape.size());
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      std::int64_t rest = flat;  // row-major: the last axis varies fastest
      for (std::size_t axis = shape.size(); axis-- > 0;) {
        index[axis] = rest % shape[axis];
        rest /= shape[axis];
      }
      std::int64_t source = 0;
      for (std::size_t k = 0; k < x_shape.size(); ++k) {
        source = source * x_shape[k] + (x_shape[k] == 1 ? 0 : index[lead + k]);
      }
      po[flat] = px[source];
    }
  });
  return out;
}

}  // namespace mg
