// sub: out = a - b with NumPy broadcasting.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Backward: a gets the upstream gradient summed back to its shape (sum_to), b the same
// negated. The kernels, shape rule and error cases are the binary elementwise engine's
// (common/elementwise.h), shared with add, mul and div.
#include "sub/sub.h"

#include "common/define_op.h"
#include "common/elementwise.h"
#include "neg/neg.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(sub);
Tensor sub_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor sub(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("sub");
  return apply_op(op, {a, b});
}

namespace {

std::vector<OpCase> sub_cases() {
  using I = InputSpec;
  // Cases with the broadcast operand first matter most: the fast paths put the full-size
  // operand first and must not turn a - b into b - a.
  return std::vector<OpCase>{
      {"same_shape", {I::real({3, 4}), I::real({3, 4})}},
      {"batch_broadcast", {I::real({2, 3, 4}), I::real({3, 4})}},
      {"broadcast_first", {I::real({3, 4}), I::real({2, 3, 4})}},
      {"both_broadcast", {I::real({2, 1, 4}), I::real({3, 1})}},
      {"outer_and_inner", {I::real({2, 1, 4, 1}), I::real({2, 3, 1, 5})}},
      {"scalar_second", {I::real({5, 3}), I::real({})}},
      {"scalar_first", {I::real({1}), I::real({5, 3})}},
      {"size_one_dims", {I::real({1, 1}), I::real({1})}},
      {"empty_rows", {I::real({3}), I::real({0, 3})}},
      // Repeated operands of 256+ elements take the repeated kernel on CUDA (16-byte loads
      // when the width allows, 257 does not).
      {"wide_rows", {I::real({3, 16, 32}), I::real({16, 32})}},
      {"wide_rows_first", {I::real({16, 32}), I::real({3, 16, 32})}},
      {"odd_width_first", {I::real({257}), I::real({3, 257})}},
  };
}

}  // namespace

void register_sub(OpRegistry& registry) {
  OpDef op;
  op.name = "sub";
  op.summary = "a - b with NumPy broadcasting";
  op.inputs = {"a", "b"};
  op.infer = elementwise_binary_infer;
  op.takes_layout = any_layout;  // the engine reads strides
  op.backward = [](const BackwardContext& ctx) {
    const Tensor& g = ctx.grad_out;  // [broadcast(A, B)]
    std::vector<Tensor> grads(2);
    if (ctx.needs_grad(0)) grads[0] = sum_to(g, ctx.input_shape(0));
    // Summed first, then negated: the negation runs on b's size, not the output's.
    if (ctx.needs_grad(1)) grads[1] = neg(sum_to(g, ctx.input_shape(1)));
    return grads;
  };
  op.kernels = MG_KERNELS(sub);
  op.out_may_alias_input = true;  // each element is read before its index is written
  op.reference = sub_reference;
  op.cases = sub_cases;
  op.error_cases = elementwise_binary_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
