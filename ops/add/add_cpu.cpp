// add on the CPU: Eigen over mapped memory for equal shapes and for the common
// [..., T, D] + [T, D] broadcast; a strided loop for every other broadcast.
#include <Eigen/Core>

#include "common/broadcast.h"
#include "minigraph/op.h"

namespace mg {

namespace {

template <typename T>
using Vec = Eigen::Map<Eigen::Array<T, Eigen::Dynamic, 1>>;
template <typename T>
using ConstVec = Eigen::Map<const Eigen::Array<T, Eigen::Dynamic, 1>>;

template <typename T>
void add_broadcast_loop(const Tensor& a, const Tensor& b, Tensor& out) {
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* po = out.data<T>();
  for_each_broadcast(out.shape(), broadcast_strides(a.shape(), out.shape()),
                     broadcast_strides(b.shape(), out.shape()),
                     [&](std::int64_t i, std::int64_t ia, std::int64_t ib) { po[i] = pa[ia] + pb[ib]; });
}

}  // namespace

void add_cpu(const KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const std::int64_t n = out.numel();
    Vec<T> o(out.data<T>(), n);
    if (a.numel() == n && b.numel() == n) {
      o = ConstVec<T>(a.data<T>(), n) + ConstVec<T>(b.data<T>(), n);
      return;
    }
    // One operand full-size, the other repeated over leading axes: add block by block.
    const bool a_full = a.numel() == n && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = b.numel() == n && is_leading_broadcast(a.shape(), out.shape());
    if ((a_full || b_full) && n > 0) {
      const Tensor& full = a_full ? a : b;
      const Tensor& part = a_full ? b : a;
      const std::int64_t block = part.numel();
      ConstVec<T> p(part.data<T>(), block);
      for (std::int64_t start = 0; start < n; start += block) {
        Vec<T>(out.data<T>() + start, block) = ConstVec<T>(full.data<T>() + start, block) + p;
      }
      return;
    }
    add_broadcast_loop<T>(a, b, out);
  });
}

void add_reference(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    add_broadcast_loop<T>(ctx.inputs[0], ctx.inputs[1], ctx.out);
  });
}

}  // namespace mg
