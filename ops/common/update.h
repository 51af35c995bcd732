// Shared by the optimizer update ops (moving_average, adamw_update, momentum_update,
// sgd_update): their shape rule, and the CPU engine that runs a functor over the elements of
// two or three inputs of one shape. The ops run through apply_op_into with the output over
// one of their inputs (optimizer state and parameters are written in place), so each element
// is read, in every input, before the same index of the output is written. Each op's naive
// reference never calls into this file.
//   N elements; in0 [..X], in1 [..X] (, in2 [..X]) -> out [..X]
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

// The rule of every update op: floating-point inputs of one dtype and one shape (the first
// input's); out has that shape and dtype.
OutputSpec update_infer(const OpDef& self, std::span<const Tensor> in);

// An OpDef named `name` over `inputs` with update_infer as its rule, not differentiable (no
// backward: optimizer steps are never recorded), allowed to write its output over an input.
OpDef update_op(std::string name, std::string summary, std::vector<std::string> inputs);

// Throws mg::Error naming op and attribute unless `value` is finite and in [lo, hi].
void check_attr_in(std::string_view op, std::string_view attr, double value, double lo, double hi);

// A case input of `shape` with values in [lo, lo + 1.5), spread over that range: for inputs
// that must stay non-negative, such as Adam's second moment.
InputSpec spread_input(Shape shape, double lo);

// An update functor (written in C++17: nvcc compiles it too, with common/update_cuda.cuh):
//   template <typename T> struct F { static constexpr int kArity = 2;  // or 3
//                                    MG_HOST_DEVICE T operator()(T a, T b) const; };
// trivially copyable (its members travel to the GPU by value).
//
// The shapes every update op is tested on, by name: a vector, a matrix, rank 3, size-1 axes, a
// scalar, no elements, and one large enough to be split across threads.
std::vector<std::pair<std::string, Shape>> update_case_shapes();

// out[i] = fn(a[i], b[i]) (arity 2) or fn(a[i], b[i], c[i]) (arity 3) for the KernelContext's
// inputs and out, with fn = make.template operator()<T>() for the dtype's T. Contiguous ranges
// across threads; each element is computed alone, so the bits do not depend on the thread count.
template <typename Make>
void update_cpu(const KernelContext& ctx, Make&& make) {
  Tensor& out = ctx.out;
  dispatch_float(out.dtype(), [&]<typename T>() {
    const auto fn = make.template operator()<T>();
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    const T* c = ctx.inputs.size() > 2 ? ctx.inputs[2].data<T>() : nullptr;
    T* po = out.data<T>();
    const std::int64_t n = out.numel();
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(n, parts, part);
      if constexpr (decltype(fn)::kArity == 3) {
        for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = fn(a[i], b[i], c[i]);
      } else {
        for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = fn(a[i], b[i]);
      }
    });
  });
}

}  // namespace mg
