// add on the CPU: flat loops split across threads for equal shapes and for the common
// [..., T, D] + [T, D] broadcast (and a scalar operand); a strided loop for every other
// broadcast.
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

void add_reference(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    add_broadcast_loop<T>(ctx.inputs[0], ctx.inputs[1], ctx.out);
  });
}

}  // namespace mg
