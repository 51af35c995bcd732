// where(condition, self, other) and masked_fill, built on it: elementwise selection under a
// bool mask, with NumPy broadcasting of all three inputs.
//   condition [..C] bool, self [..S], other [..O] -> out [broadcast(C, S, O)]
// Derivatives: self's gradient is where(condition, grad_out, 0), other's where(condition, 0,
// grad_out), each summed back to its shape (sum_to); the rule reads the condition only.
#include "where/where.h"

#include <cmath>

#include "common/broadcast.h"
#include "common/define_op.h"
#include "sum_to/sum_to.h"
#include "where/where_kernels.h"

namespace mg {

Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("where");
  return apply_op(op, {condition, self, other});
}

Tensor masked_fill(const Tensor& self, const Tensor& mask, double value) {
  MG_CHECK(self.defined(), "masked_fill", "self", "a defined tensor", "an undefined one");
  return where(mask, Tensor::full({}, value, self.dtype(), self.device()), self);
}

WhereLayout where_layout(const KernelContext& ctx) {
  const Shape& out = ctx.out.shape();
  WhereLayout layout;
  layout.rank = static_cast<int>(out.size());
  for (int axis = 0; axis < layout.rank; ++axis) layout.size[axis] = out[axis];
  for (int k = 0; k < 3; ++k) {
    const auto strides = broadcast_strides(ctx.inputs[k].shape(), out);
    for (int axis = 0; axis < layout.rank; ++axis) layout.stride[k][axis] = strides[axis];
  }
  return layout;
}

namespace {

using Grads = std::vector<Tensor>;
using I = InputSpec;

OutputSpec where_infer(const OpDef& self, std::span<const Tensor> in, const std::any&) {
  MG_CHECK(is_bool(in[0].dtype()), self.name, self.inputs[0],
           "a bool mask (DType::boolean, as a comparison gives)", "dtype {}",
           dtype_name(in[0].dtype()));
  check_floating(self, 1, in[1]);
  check_floating(self, 2, in[2]);
  check_same_dtype(self, 2, in[2], in[1].dtype());
  Shape both, out;
  MG_CHECK(broadcast_shapes(in[1].shape(), in[2].shape(), both), self.name, self.inputs[2],
           fmt::format("a shape broadcastable with self's {}", shape_str(in[1].shape())), "{}",
           shape_str(in[2].shape()));
  MG_CHECK(
      broadcast_shapes(in[0].shape(), both, out), self.name, self.inputs[0],
      fmt::format("a shape broadcastable with {}, the shape of self and other", shape_str(both)),
      "{}", shape_str(in[0].shape()));
  MG_CHECK(out.size() <= static_cast<std::size_t>(kWhereMaxRank), self.name, "self",
           fmt::format("a result of rank at most {}", kWhereMaxRank), "rank {}", out.size());
  return OutputSpec{out, in[1].dtype()};
}

Grads where_backward(const BackwardContext& ctx) {
  const Tensor& condition = ctx.input(0);
  const Tensor zero = Tensor::zeros({}, ctx.grad_out.dtype(), ctx.grad_out.device());
  Grads grads(3);
  if (ctx.needs_grad(1)) {
    grads[1] = sum_to(where(condition, ctx.grad_out, zero), ctx.input_shape(1));
  }
  if (ctx.needs_grad(2)) {
    grads[2] = sum_to(where(condition, zero, ctx.grad_out), ctx.input_shape(2));
  }
  return grads;
}

// The naive reference: the three shapes padded to one rank by hand, each output index mapped
// to every input's flat index (index 0 on its size-1 axes).
Tensor where_reference(std::span<const Tensor> in, const std::any&) {
  std::size_t rank = 0;
  for (const Tensor& t : in) rank = std::max(rank, t.shape().size());
  std::vector<Shape> padded;
  for (const Tensor& t : in) {
    Shape p(rank - t.shape().size(), 1);
    p.insert(p.end(), t.shape().begin(), t.shape().end());
    padded.push_back(std::move(p));
  }
  Shape shape(rank, 1);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    for (const Shape& p : padded) shape[axis] = p[axis] == 1 ? shape[axis] : p[axis];
  }
  Tensor out = Tensor::empty(shape, in[1].dtype());
  std::vector<std::int64_t> index(rank);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;
    for (std::size_t axis = rank; axis-- > 0;) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
    std::int64_t at[3] = {0, 0, 0};
    for (std::size_t k = 0; k < 3; ++k) {
      for (std::size_t axis = 0; axis < rank; ++axis) {
        at[k] = at[k] * padded[k][axis] + (padded[k][axis] == 1 ? 0 : index[axis]);
      }
    }
    out.set_flat(flat, in[0].at_flat(at[0]) != 0 ? in[1].at_flat(at[1]) : in[2].at_flat(at[2]));
  }
  return out;
}

// A bool mask of `shape`: true and false in an irregular pattern.
InputSpec where_mask(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = (i * 5 + 2) % 7 < 3 ? 1 : 0;
  return I::real(std::move(shape)).with_values(std::move(values)).with_dtype(DType::boolean);
}

// The causal mask of attention: true above the diagonal (the future).
InputSpec where_causal_mask(std::int64_t t) {
  std::vector<double> values(static_cast<std::size_t>(t * t));
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = 0; c < t; ++c) values[static_cast<std::size_t>(r * t + c)] = c > r;
  }
  return I::real({t, t}).with_values(std::move(values)).with_dtype(DType::boolean);
}

std::vector<OpCase> where_cases() {
  const double inf = INFINITY, nan = std::nan("");
  OpCase edges{"nan_and_inf_not_taken",
               {where_mask({6}), I::real({6}).with_values({nan, 1, inf, -inf, nan, 2}),
                I::real({6}).with_values({3, nan, -inf, nan, 4, inf})}};
  edges.edge_values = true;
  return std::vector<OpCase>{
      {"same_shape", {where_mask({3, 4}), I::real({3, 4}), I::real({3, 4})}},
      {"mask_broadcast", {where_mask({4}), I::real({3, 4}), I::real({3, 4})}},
      {"scalar_other", {where_mask({2, 5}), I::real({2, 5}), I::real({})}},
      {"scalar_self", {where_mask({2, 5}), I::real({}), I::real({2, 5})}},
      {"all_broadcast", {where_mask({2, 1, 4}), I::real({3, 1}), I::real({1, 3, 4})}},
      {"scalar_mask", {where_mask({}), I::real({2, 3}), I::real({2, 3})}},
      {"empty", {where_mask({0, 3}), I::real({0, 3}), I::real({3})}},
      // Attention's causal mask over [B, H, T, T] scores, the fill a 0-d tensor.
      {"causal_scores", {where_causal_mask(8), I::real({}), I::real({2, 2, 8, 8})}},
      {"threaded", {where_mask({256, 300}), I::real({256, 300}), I::real({300})}, 16},
      edges,
  };
}

std::vector<ErrorCase> where_error_cases() {
  return std::vector<ErrorCase>{
      {"float_condition",
       {I::real({2, 3}).no_grad(), I::real({2, 3}), I::real({2, 3})},
       {},
       "argument 'condition': expected a bool mask"},
      {"ids_condition",
       {I::ids({2, 3}, 2), I::real({2, 3}), I::real({2, 3})},
       {},
       "argument 'condition': expected a bool mask (DType::boolean, as a comparison gives), got "
       "dtype i64"},
      {"other_shape",
       {where_mask({2, 3}), I::real({2, 3}), I::real({4})},
       {},
       "argument 'other': expected a shape broadcastable with self's [2, 3]"},
      {"condition_shape",
       {where_mask({5}), I::real({2, 3}), I::real({2, 3})},
       {},
       "argument 'condition': expected a shape broadcastable with [2, 3]"},
      {"rank_past_eight",
       {where_mask({}), I::real({1, 1, 1, 1, 1, 1, 1, 1, 1}), I::real({})},
       {},
       "a result of rank at most 8, got rank 9"},
  };
}

}  // namespace

void register_where(OpRegistry& registry) {
  OpDef op;
  op.name = "where";
  op.summary = "condition ? self : other elementwise, with NumPy broadcasting";
  op.inputs = {"condition", "self", "other"};
  op.infer = where_infer;
  op.backward = where_backward;
  op.backward_reads = {"condition"};
  op.kernels = MG_KERNELS(where);
  op.reference = where_reference;
  op.cases = where_cases;
  op.error_cases = where_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
