// The elementwise binary family: add, sub, mul and div, one row each. A row names the op, its
// functor (binary_kernels.h), its derivative and what the derivative reads; the family gives
// every row its shape rule (NumPy broadcasting), error cases, kernels, naive reference and case
// table.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Derivatives: each input's gradient is summed back to its own shape (sum_to).
#include "binary/binary.h"

#include <algorithm>
#include <cmath>

#include "binary/binary_kernels.h"
#include "common/broadcast.h"
#include "common/define_op.h"
#include "sum_to/sum_to.h"
#include "unary/unary.h"
#include "unary/unary_kernels.h"

namespace mg {

Tensor add(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("add");
  return apply_op(op, {a, b});
}
Tensor sub(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("sub");
  return apply_op(op, {a, b});
}
Tensor mul(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("mul");
  return apply_op(op, {a, b});
}
Tensor div(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("div");
  return apply_op(op, {a, b});
}

Tensor eq(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("eq");
  return apply_op(op, {self, other});
}
Tensor ne(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("ne");
  return apply_op(op, {self, other});
}
Tensor lt(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("lt");
  return apply_op(op, {self, other});
}
Tensor le(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("le");
  return apply_op(op, {self, other});
}
Tensor gt(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("gt");
  return apply_op(op, {self, other});
}
Tensor ge(const Tensor& self, const Tensor& other) {
  static const OpDef& op = builtin_op("ge");
  return apply_op(op, {self, other});
}
namespace {
// Against a scalar: a 0-d tensor of self's dtype on its device, broadcast.
Tensor scalar_like(const Tensor& self, double value) {
  return Tensor::full({}, value, self.dtype(), self.device());
}
}  // namespace
Tensor eq(const Tensor& self, double other) { return eq(self, scalar_like(self, other)); }
Tensor ne(const Tensor& self, double other) { return ne(self, scalar_like(self, other)); }
Tensor lt(const Tensor& self, double other) { return lt(self, scalar_like(self, other)); }
Tensor le(const Tensor& self, double other) { return le(self, scalar_like(self, other)); }
Tensor gt(const Tensor& self, double other) { return gt(self, scalar_like(self, other)); }
Tensor ge(const Tensor& self, double other) { return ge(self, scalar_like(self, other)); }

Tensor relu_backward(const Tensor& grad_out, const Tensor& result) {
  static const OpDef& op = builtin_op("relu_backward");
  return apply_op(op, {grad_out, result});
}
Tensor tanh_backward(const Tensor& grad_out, const Tensor& result) {
  static const OpDef& op = builtin_op("tanh_backward");
  return apply_op(op, {grad_out, result});
}
Tensor sigmoid_backward(const Tensor& grad_out, const Tensor& result) {
  static const OpDef& op = builtin_op("sigmoid_backward");
  return apply_op(op, {grad_out, result});
}
Tensor gelu_backward(const Tensor& grad_out, const Tensor& x, std::string_view approximate) {
  static const OpDef& exact = builtin_op("gelu_backward");
  static const OpDef& tanh_form = builtin_op("gelu_tanh_backward");
  return apply_op(gelu_is_tanh("gelu_backward", approximate) ? tanh_form : exact, {grad_out, x});
}

namespace {

using Grads = std::vector<Tensor>;

// a + b: the upstream gradient, summed back to each input's shape.
Grads add_backward(const BackwardContext& ctx) {
  Grads grads(2);
  for (std::size_t i = 0; i < 2; ++i) {
    if (ctx.needs_grad(i)) grads[i] = sum_to(ctx.grad_out, ctx.input_shape(i));
  }
  return grads;
}

// a - b: b's is summed first, then negated, so the negation runs on b's size.
Grads sub_backward(const BackwardContext& ctx) {
  Grads grads(2);
  if (ctx.needs_grad(0)) grads[0] = sum_to(ctx.grad_out, ctx.input_shape(0));
  if (ctx.needs_grad(1)) grads[1] = neg(sum_to(ctx.grad_out, ctx.input_shape(1)));
  return grads;
}

// a * b: a gets g * b, b gets g * a.
Grads mul_backward(const BackwardContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  Grads grads(2);
  if (ctx.needs_grad(0)) grads[0] = sum_to(mul(ctx.grad_out, b), a.shape());
  if (ctx.needs_grad(1)) grads[1] = sum_to(mul(ctx.grad_out, a), b.shape());
  return grads;
}

// a / b: a gets g / b; b gets -(g / b) * (a / b) = -g * a / b^2, negated after the sum.
Grads div_backward(const BackwardContext& ctx) {
  const Tensor& a = ctx.input(0);
  const Tensor& b = ctx.input(1);
  const Tensor g_over_b = div(ctx.grad_out, b);  // [broadcast(A, B)]
  Grads grads(2);
  if (ctx.needs_grad(0)) grads[0] = sum_to(g_over_b, a.shape());
  if (ctx.needs_grad(1)) grads[1] = neg(sum_to(mul(g_over_b, div(a, b)), b.shape()));
  return grads;
}

template <typename Fn>
OutputSpec binary_infer(const OpDef& self, std::span<const Tensor> in, const std::any&) {
  check_floating(self, 0, in[0]);
  check_floating(self, 1, in[1]);
  check_same_dtype(self, 1, in[1], in[0].dtype());
  Shape out;
  MG_CHECK(
      broadcast_shapes(in[0].shape(), in[1].shape(), out), self.name, self.inputs[1],
      fmt::format("a shape broadcastable with {}'s {}", self.inputs[0], shape_str(in[0].shape())),
      "{}", shape_str(in[1].shape()));
  return OutputSpec{out, kIsComparison<Fn> ? DType::boolean : in[0].dtype()};
}

// The naive reference, apart from the kernels (nothing from common/broadcast.h): NumPy's rule
// spelled out, then one plain loop over every output element applying the row's functor.
template <typename Fn>
Tensor binary_reference(std::span<const Tensor> inputs, const std::any&) {
  const Shape& a = inputs[0].shape();
  const Shape& b = inputs[1].shape();
  // Pad both shapes with leading 1s to one rank; each output axis is the size that is not 1
  // (the shape rule has checked that they agree otherwise).
  const std::size_t rank = std::max(a.size(), b.size());
  Shape pad_a(rank - a.size(), 1), pad_b(rank - b.size(), 1);
  pad_a.insert(pad_a.end(), a.begin(), a.end());
  pad_b.insert(pad_b.end(), b.begin(), b.end());
  Shape shape(rank);
  for (std::size_t axis = 0; axis < rank; ++axis) {
    shape[axis] = pad_a[axis] == 1 ? pad_b[axis] : pad_a[axis];
  }
  Tensor out = Tensor::empty(shape, kIsComparison<Fn> ? DType::boolean : inputs[0].dtype());
  std::vector<std::int64_t> index(rank);
  for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
    std::int64_t rest = flat;  // row-major: the last axis varies fastest
    for (std::size_t axis = rank; axis-- > 0;) {
      index[axis] = rest % shape[axis];
      rest /= shape[axis];
    }
    // On an axis of size 1 an input always reads index 0.
    std::int64_t ia = 0, ib = 0;
    for (std::size_t axis = 0; axis < rank; ++axis) {
      ia = ia * pad_a[axis] + (pad_a[axis] == 1 ? 0 : index[axis]);
      ib = ib * pad_b[axis] + (pad_b[axis] == 1 ? 0 : index[axis]);
    }
    out.set_flat(flat, static_cast<double>(Fn{}(inputs[0].at_flat(ia), inputs[1].at_flat(ib))));
  }
  return out;
}

// A b of `shape` for div: magnitudes in [0.5, 2] with both signs, never near 0, so the finite
// differences of 1 / b stay accurate.
InputSpec divisor(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = (i % 2 == 0 ? 1.0 : -1.0) * (0.5 + 0.25 * static_cast<double>(i * 3 % 7));
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values));
}
InputSpec real_b(Shape shape) { return InputSpec::real(std::move(shape)); }
// Operands of a comparison: integers in [-2, 2], so that equal pairs occur (random reals are
// never equal), and the two inputs differ in pattern.
InputSpec small_integers(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(static_cast<int>((i * 7 + 3) % 5) - 2);
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values)).no_grad();
}
InputSpec other_small_integers(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = static_cast<double>(static_cast<int>((i * 3 + 1) % 5) - 2);
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values)).no_grad();
}

// Every row's cases, b made by `second`. Cases with the broadcast operand first matter for sub
// and div: the fast paths put the full-size operand first and must not turn a - b into b - a.
std::vector<OpCase> binary_cases(InputSpec (*first)(Shape), InputSpec (*second)(Shape)) {
  struct ShapePair {
    const char* name;
    Shape a, b;
  };
  const ShapePair pairs[] = {
      {"same_shape", {3, 4}, {3, 4}},
      {"batch_broadcast", {2, 3, 4}, {3, 4}},
      {"broadcast_first", {3, 4}, {2, 3, 4}},
      {"both_broadcast", {2, 1, 4}, {3, 1}},
      {"middle_axis", {2, 3, 4}, {3, 1}},
      {"outer_and_inner", {2, 1, 4, 1}, {2, 3, 1, 5}},
      {"size_one_dims", {1, 1}, {1}},
      {"scalar_like", {5, 3}, {1}},
      {"scalar_second", {5, 3}, {}},
      {"scalar_first", {}, {2, 3}},
      {"size_one_first", {1}, {5, 3}},
      {"empty_rows", {0, 3}, {3}},
      {"empty_rows_second", {3}, {0, 3}},
      {"andrea_tok_pos", {2, 16, 8}, {16, 8}},
      // Repeated operands of 256+ elements take the repeated kernel on CUDA (16-byte loads
      // when the width allows, 257 does not).
      {"wide_rows", {3, 16, 32}, {16, 32}},
      {"wide_rows_first", {16, 32}, {3, 16, 32}},
      {"odd_width_first", {257}, {2, 257}},
      {"odd_width", {2, 257}, {257}},
  };
  std::vector<OpCase> cases;
  for (const ShapePair& p : pairs) cases.push_back({p.name, {first(p.a), second(p.b)}});
  return cases;
}

// A comparison's cases: the shared ones, and the edges of IEEE comparison (NaN against
// everything, itself included; infinities; -0 against +0), forward only.
std::vector<OpCase> comparison_cases() {
  using I = InputSpec;
  const double inf = INFINITY, nan = std::nan("");
  auto cases = binary_cases(small_integers, other_small_integers);
  OpCase edges{"nan_inf_signed_zero",
               {I::real({8}).with_values({nan, nan, 1.0, inf, -inf, inf, 0.0, 1e30}).no_grad(),
                I::real({8}).with_values({nan, 1.0, nan, inf, inf, 3e38, -0.0, 1e30}).no_grad()}};
  edges.edge_values = true;
  cases.push_back(edges);
  return cases;
}

std::vector<ErrorCase> binary_error_cases() {
  using I = InputSpec;
  return std::vector<ErrorCase>{
      {"shape_mismatch", {I::real({2, 3}), I::real({4})}, {}, "broadcastable"},
  };
}

// One row of the table: everything but the functor, which picks the kernels and reference.
struct BinaryRow {
  const char* name;
  const char* summary;
  std::vector<std::string> backward_reads;
  Grads (*backward)(const BackwardContext&);
  InputSpec (*second)(Shape) = real_b;
  std::vector<std::string> inputs = {"a", "b"};
};

// A comparison's row: not differentiable (a mask has no gradient), cases of its own.
BinaryRow comparison_row(const char* name, const char* summary) {
  return {name, summary, {}, nullptr, real_b, {"self", "other"}};
}

template <typename Fn>
OpDef binary_op(BinaryRow row) {
  OpDef op;
  op.name = row.name;
  op.summary = row.summary;
  op.inputs = std::move(row.inputs);
  op.infer = binary_infer<Fn>;
  op.takes_layout = any_layout;  // the engines read strides
  op.backward_reads = std::move(row.backward_reads);
  op.backward = row.backward;
  op.kernels = device_kernels(binary_cpu<Fn>, MG_CUDA_KERNEL(binary_cuda<Fn>));
  // Each element is read before its index is written; a bool out is never an operand.
  op.out_may_alias_input = !kIsComparison<Fn>;
  op.reference = binary_reference<Fn>;
  if constexpr (kIsComparison<Fn>) {
    op.cases = comparison_cases;
  } else {
    op.cases = [second = row.second] { return binary_cases(real_b, second); };
  }
  op.error_cases = binary_error_cases;
  return op;
}

}  // namespace

void register_binary(OpRegistry& registry) {
  registry.add(binary_op<AddFn>({"add", "a + b with NumPy broadcasting", {}, add_backward}));
  registry.add(binary_op<SubFn>({"sub", "a - b with NumPy broadcasting", {}, sub_backward}));
  registry.add(binary_op<MulFn>(
      {"mul", "a * b elementwise, with NumPy broadcasting", {"a", "b"}, mul_backward}));
  registry.add(binary_op<DivFn>(
      {"div", "a / b elementwise, with NumPy broadcasting", {"a", "b"}, div_backward, divisor}));

  // Derivatives of unary ops (not differentiable themselves).
  const std::vector<std::string> reads_result = {"grad_out", "result"};
  registry.add(binary_op<ReluBackwardFn>(
      {"relu_backward", "grad_out where result > 0, else 0", {}, nullptr, real_b, reads_result}));
  registry.add(binary_op<TanhBackwardFn>(
      {"tanh_backward", "grad_out * (1 - result^2)", {}, nullptr, real_b, reads_result}));
  registry.add(binary_op<SigmoidBackwardFn>(
      {"sigmoid_backward", "grad_out * (1 - result) * result", {}, nullptr, real_b, reads_result}));
  registry.add(binary_op<GeluBackwardFn>({"gelu_backward",
                                          "grad_out * gelu'(x), the erf form",
                                          {},
                                          nullptr,
                                          real_b,
                                          {"grad_out", "x"}}));
  registry.add(binary_op<GeluTanhBackwardFn>({"gelu_tanh_backward",
                                              "grad_out * gelu'(x), the tanh approximation's",
                                              {},
                                              nullptr,
                                              real_b,
                                              {"grad_out", "x"}}));

  // Comparisons, giving masks (DType::boolean).
  registry.add(binary_op<EqFn>(comparison_row("eq", "self == other, a bool mask")));
  registry.add(binary_op<NeFn>(comparison_row("ne", "self != other, a bool mask")));
  registry.add(binary_op<LtFn>(comparison_row("lt", "self < other, a bool mask")));
  registry.add(binary_op<LeFn>(comparison_row("le", "self <= other, a bool mask")));
  registry.add(binary_op<GtFn>(comparison_row("gt", "self > other, a bool mask")));
  registry.add(binary_op<GeFn>(comparison_row("ge", "self >= other, a bool mask")));
}

}  // namespace mg
