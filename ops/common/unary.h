// Shared by the elementwise unary ops (neg, scale, exp, log): their shape rule, the part of
// their OpDef that does not depend on the function, and the CPU engine that runs a functor
// (common/unary_functor.h) over every element. Each op adds its functor, backward rule,
// reference and cases; its naive reference never calls into this file.
//   N elements; x [..X] -> out [..X]
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "common/broadcast.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

// The rule of every unary op: a floating-point x; out has x's shape and dtype.
OutputSpec unary_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs);

// An OpDef named `name` over one input "x" with unary_infer as its rule, allowed to write its
// output over x (out_may_alias_input: each element is read before the same index is written),
// and taking views (unary_cpu and unary_cuda read strides; on CUDA up to rank
// kMaxBroadcastGroups, past it the dispatcher hands them a contiguous x).
OpDef unary_op(std::string name, std::string summary);

// The shapes every unary op is tested on, each case one input made by `input` from its shape
// (InputSpec::real, or values inside the function's domain) and `attrs`: a vector, a matrix,
// rank 3, size-1 axes, a scalar, no elements, the model's activations, and one large enough
// to be split across threads (a sampled gradcheck). Ops add the edges of their own function.
std::vector<OpCase> unary_cases(const std::function<InputSpec(Shape)>& input,
                                const std::any& attrs = {});

// out[i] = fn(x[i]) for the KernelContext's x and out, with fn = make.template operator()<T>()
// for the dtype's T (make builds the functor, e.g. from attributes). Contiguous ranges across
// threads; the loop body is the functor alone, so the compiler vectorises it where the
// function allows. x and out may be the same memory (never partly overlapping).
template <typename Make>
void unary_cpu(const KernelContext& ctx, Make&& make) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const auto fn = make.template operator()<T>();
    T* po = out.data<T>();
    const std::int64_t n = out.numel();
    if (!x.is_contiguous()) {  // a view (takes_layout on the CPU): read through its strides
      const T* px = x.data_ptr<T>();
      for_each_broadcast(
          x.shape(), x.strides(), std::vector<std::int64_t>(x.shape().size(), 0),
          [&](std::int64_t i, std::int64_t at, std::int64_t) { po[i] = fn(px[at]); });
      return;
    }
    const T* px = x.data<T>();
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(n, parts, part);
      for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = fn(px[i]);
    });
  });
}

// The same for a functor without state: unary_cpu<NegFn>(ctx).
template <template <typename> class Fn>
void unary_cpu(const KernelContext& ctx) {
  unary_cpu(ctx, []<typename T>() { return Fn<T>{}; });
}

}  // namespace mg
