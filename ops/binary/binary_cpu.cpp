// The binary elementwise engine on the CPU: flat loops split across threads when one operand
// is full-size and the other equal or repeated over its leading axes (the [B, T, D] + [T, D]
// of the input layer, or a scalar); a strided loop for every other broadcast or view (inputs
// are read through their strides: OpDef::takes_layout = any_layout). The functor is a
// template argument, so each op's loop is compiled on its own (and for AVX2: common/cpu_isa.h).
//   a [..A], b [..B] -> out [broadcast(A, B)]; n = out elements
#include <algorithm>

#include "binary/binary_kernels.h"
#include "common/broadcast.h"
#include "common/cpu_isa.h"
#include "common/streaming.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

template <typename T, typename Fn>
void binary_broadcast_loop(const Tensor& a, const Tensor& b, Tensor& out, Fn fn) {
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  auto* po = out.data<BinaryResult<Fn, T>>();
  for_each_broadcast(
      out.shape(), broadcast_strides(a.shape(), a.strides(), out.shape()),
      broadcast_strides(b.shape(), b.strides(), out.shape()),
      [&](std::int64_t i, std::int64_t ia, std::int64_t ib) { po[i] = fn(pa[ia], pb[ib]); });
}

// out[i] = fn(full[i], part[i % block]) for i in [0, n): the part repeats over leading axes
// (block == n: equal shapes; block == 1: a scalar), in contiguous ranges across threads.
template <typename T, typename Fn, typename Out>
void binary_repeated(const T* full, const T* part, std::int64_t block, Out* out, std::int64_t n,
                     Fn fn) {
  const int parts = threads_for(n);
  const bool stream = streams(n, sizeof(Out));
  parallel_for(parts, [&](int thread_part) {
    const Range r = part_range(n, parts, thread_part);
    run_vectorized([&] {
      if (block == 1) {
        const T p = part[0];
        write_elements(out, r.begin, r.end, stream, [&](std::int64_t i) { return fn(full[i], p); });
        return;
      }
      for (std::int64_t i = r.begin; i < r.end;) {
        const std::int64_t j = i % block, run = std::min(r.end - i, block - j);
        const T* repeated = part + (j - i);  // repeated[k] is part[j + k - i]
        write_elements(out, i, i + run, stream,
                       [&](std::int64_t k) { return fn(full[k], repeated[k]); });
        i += run;
      }
    });
  });
}

}  // namespace

template <typename Fn>
void binary_cpu(const KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  dispatch_float(a.dtype(), [&]<typename T>() {  // the operands' dtype: a comparison's out is bool
    using Out = BinaryResult<Fn, T>;
    const std::int64_t n = out.numel();
    // One operand full-size, the other equal or repeated over leading axes; views take the
    // strided loop.
    const bool dense = a.is_contiguous() && b.is_contiguous();
    const bool a_full = dense && a.numel() == n && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = dense && b.numel() == n && is_leading_broadcast(a.shape(), out.shape());
    if (a_full && n > 0) {
      binary_repeated<T>(a.data<T>(), b.data<T>(), b.numel(), out.data<Out>(), n, Fn{});
    } else if (b_full && n > 0) {
      binary_repeated<T>(b.data<T>(), a.data<T>(), a.numel(), out.data<Out>(), n, Flipped<Fn>{});
    } else {
      binary_broadcast_loop<T>(a, b, out, Fn{});
    }
  });
}

#define MG_INSTANTIATE(Fn) template void binary_cpu<Fn>(const KernelContext&);
MG_BINARY_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
