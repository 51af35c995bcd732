// The binary elementwise engine on the CPU (elementwise.h): flat loops split across threads
// when one operand is full-size and the other equal or repeated over its leading axes (the
// [B, T, D] + [T, D] of the input layer, or a scalar); a strided loop for every other
// broadcast or view (inputs are read through their strides: OpDef::takes_layout = any_layout).
// The function is a template argument, so each op's loop is compiled on its own.
//   a [..A], b [..B] -> out [broadcast(A, B)]; n = out elements
#include "common/elementwise.h"

#include <algorithm>

#include "common/broadcast.h"
#include "minigraph/threads.h"

namespace mg {

OutputSpec elementwise_binary_infer(const OpDef& self, std::span<const Tensor> in,
                                    const std::any&) {
  check_floating(self, 0, in[0]);
  check_floating(self, 1, in[1]);
  check_same_dtype(self, 1, in[1], in[0].dtype());
  Shape out;
  MG_CHECK(broadcast_shapes(in[0].shape(), in[1].shape(), out), self.name, "b",
           fmt::format("a shape broadcastable with a's {}", shape_str(in[0].shape())), "{}",
           shape_str(in[1].shape()));
  return OutputSpec{out, in[0].dtype()};
}

std::vector<ErrorCase> elementwise_binary_error_cases() {
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"shape_mismatch", {I::real({2, 3}), I::real({4})}, {}, "broadcastable"},
      {"dtype_mix",
       {I::real({2, 3}).with_dtype(DType::f32), I::real({2, 3}).with_dtype(DType::f64)},
       {},
       "dtype f32"},
      {"integer_input", {I::ids({2, 3}, 5), I::real({2, 3})}, {}, "floating-point"},
      {"integer_second_input", {I::real({2, 3}), I::ids({2, 3}, 5)}, {}, "floating-point"},
  };
}

namespace {

template <typename T, typename Fn>
void binary_broadcast_loop(const Tensor& a, const Tensor& b, Tensor& out, Fn fn) {
  const T* pa = a.data_ptr<T>();
  const T* pb = b.data_ptr<T>();
  T* po = out.data<T>();
  for_each_broadcast(
      out.shape(), broadcast_strides(a.shape(), a.strides(), out.shape()),
      broadcast_strides(b.shape(), b.strides(), out.shape()),
      [&](std::int64_t i, std::int64_t ia, std::int64_t ib) { po[i] = fn(pa[ia], pb[ib]); });
}

// out[i] = fn(full[i], part[i % block]) for i in [0, n): the part repeats over leading axes
// (block == n: equal shapes; block == 1: a scalar), in contiguous ranges across threads.
template <typename T, typename Fn>
void binary_repeated(const T* full, const T* part, std::int64_t block, T* out, std::int64_t n,
                     Fn fn) {
  const int parts = threads_for(n);
  parallel_for(parts, [&](int thread_part) {
    const Range r = part_range(n, parts, thread_part);
    if (block == 1) {
      const T p = part[0];
      for (std::int64_t i = r.begin; i < r.end; ++i) out[i] = fn(full[i], p);
      return;
    }
    for (std::int64_t i = r.begin; i < r.end;) {
      const std::int64_t j = i % block, run = std::min(r.end - i, block - j);
      for (std::int64_t k = 0; k < run; ++k) out[i + k] = fn(full[i + k], part[j + k]);
      i += run;
    }
  });
}

template <typename Fn>
void binary_cpu(const KernelContext& ctx, Fn fn) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const std::int64_t n = out.numel();
    // One operand full-size, the other equal or repeated over leading axes; views take the
    // strided loop.
    const bool dense = a.is_contiguous() && b.is_contiguous();
    const bool a_full = dense && a.numel() == n && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = dense && b.numel() == n && is_leading_broadcast(a.shape(), out.shape());
    if (a_full && n > 0) {
      binary_repeated<T>(a.data<T>(), b.data<T>(), b.numel(), out.data<T>(), n, fn);
    } else if (b_full && n > 0) {
      binary_repeated<T>(b.data<T>(), a.data<T>(), a.numel(), out.data<T>(), n, Flipped<Fn>{fn});
    } else {
      binary_broadcast_loop<T>(a, b, out, fn);
    }
  });
}

}  // namespace

void elementwise_binary_cpu(const KernelContext& ctx, BinaryOp op) {
  visit_binary_op(op, [&](auto fn) { binary_cpu(ctx, fn); });
}

}  // namespace mg
