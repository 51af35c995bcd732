// div: out = a / b (elementwise) with NumPy broadcasting.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Backward: a gets g / b; b gets -(g / b) * (a / b) = -g * a / b^2; each summed back to its
// own shape (sum_to). The kernels, shape rule and error cases are the binary elementwise
// engine's (common/elementwise.h), shared with add, sub and mul.
#include "div/div.h"

#include "common/define_op.h"
#include "common/elementwise.h"
#include "mul/mul.h"
#include "neg/neg.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(div);
Tensor div_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor div(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("div");
  return apply_op(op, {a, b});
}

namespace {

// A divisor input of `shape`: magnitudes in [0.5, 2] with both signs, never near 0, so the
// finite differences of 1 / b stay accurate.
InputSpec divisor(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = (i % 2 == 0 ? 1.0 : -1.0) * (0.5 + 0.25 * static_cast<double>(i * 3 % 7));
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values));
}

std::vector<OpCase> div_cases() {
  using I = InputSpec;
  // Every divisor b comes from divisor(): away from 0. Cases with the broadcast operand
  // first matter most: the fast paths put the full-size operand first and must not turn
  // a / b into b / a.
  return std::vector<OpCase>{
      {"same_shape", {I::real({3, 4}), divisor({3, 4})}},
      {"batch_broadcast", {I::real({2, 3, 4}), divisor({3, 4})}},
      {"broadcast_first", {I::real({3, 4}), divisor({2, 3, 4})}},
      {"both_broadcast", {I::real({2, 1, 4}), divisor({3, 1})}},
      {"outer_and_inner", {I::real({2, 1, 4, 1}), divisor({2, 3, 1, 5})}},
      {"scalar_divisor", {I::real({5, 3}), divisor({})}},
      {"scalar_numerator", {I::real({1}), divisor({5, 3})}},
      {"size_one_dims", {I::real({1, 1}), divisor({1})}},
      {"empty_rows", {I::real({0, 3}), divisor({3})}},
      // Repeated operands of 256+ elements take the repeated kernel on CUDA (16-byte loads
      // when the width allows, 257 does not).
      {"wide_rows", {I::real({3, 16, 32}), divisor({16, 32})}},
      {"wide_rows_first", {I::real({16, 32}), divisor({3, 16, 32})}},
      {"odd_width_first", {I::real({257}), divisor({2, 257})}},
  };
}

}  // namespace

void register_div(OpRegistry& registry) {
  OpDef op;
  op.name = "div";
  op.summary = "a / b elementwise, with NumPy broadcasting";
  op.inputs = {"a", "b"};
  op.infer = elementwise_binary_infer;
  op.takes_layout = any_layout;  // the engine reads strides
  op.backward_reads = {"a", "b"};
  op.backward = [](const BackwardContext& ctx) {
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    const Tensor g_over_b = div(ctx.grad_out, b);  // [broadcast(A, B)]
    std::vector<Tensor> grads(2);
    if (ctx.needs_grad(0)) grads[0] = sum_to(g_over_b, a.shape());
    // Summed first, then negated: the negation runs on b's size, not the output's.
    if (ctx.needs_grad(1)) grads[1] = neg(sum_to(mul(g_over_b, div(a, b)), b.shape()));
    return grads;
  };
  op.kernels = MG_KERNELS(div);
  op.out_may_alias_input = true;  // each element is read before its index is written
  op.reference = div_reference;
  op.cases = div_cases;
  op.error_cases = elementwise_binary_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
