// mul: out = a * b (elementwise) with NumPy broadcasting.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Backward: a gets g * b and b gets g * a, each summed back to its own shape (sum_to). The
// kernels, shape rule and error cases are the binary elementwise engine's
// (common/elementwise.h), shared with add, sub and div.
#include "mul/mul.h"

#include "common/define_op.h"
#include "common/elementwise.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(mul);
Tensor mul_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor mul(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("mul");
  return apply_op(op, {a, b});
}

namespace {

std::vector<OpCase> mul_cases() {
  using I = InputSpec;
  return std::vector<OpCase>{
      {"same_shape", {I::real({3, 4}), I::real({3, 4})}},
      {"batch_broadcast", {I::real({2, 3, 4}), I::real({3, 4})}},
      {"broadcast_first", {I::real({3, 4}), I::real({2, 3, 4})}},
      {"both_broadcast", {I::real({2, 1, 4}), I::real({3, 1})}},
      {"middle_axis", {I::real({2, 3, 4}), I::real({3, 1})}},
      {"scalar_first", {I::real({}), I::real({2, 3})}},
      {"scalar_like", {I::real({5, 3}), I::real({1})}},
      {"size_one_dims", {I::real({1, 1}), I::real({1})}},
      {"empty_rows", {I::real({0, 3}), I::real({3})}},
      {"andrea_tok_times_pos", {I::real({2, 16, 8}), I::real({16, 8})}},
      // Repeated operands of 256+ elements take the repeated kernel on CUDA (16-byte loads
      // when the width allows, 257 does not).
      {"wide_rows_first", {I::real({16, 32}), I::real({3, 16, 32})}},
      {"odd_width", {I::real({2, 257}), I::real({257})}},
  };
}

}  // namespace

void register_mul(OpRegistry& registry) {
  OpDef op;
  op.name = "mul";
  op.summary = "a * b elementwise, with NumPy broadcasting";
  op.inputs = {"a", "b"};
  op.infer = elementwise_binary_infer;
  op.takes_layout = any_layout;  // the engine reads strides
  op.backward_reads = {"a", "b"};
  op.backward = [](const BackwardContext& ctx) {
    const Tensor& g = ctx.grad_out;  // [broadcast(A, B)]
    const Tensor& a = ctx.input(0);
    const Tensor& b = ctx.input(1);
    std::vector<Tensor> grads(2);
    if (ctx.needs_grad(0)) grads[0] = sum_to(mul(g, b), a.shape());
    if (ctx.needs_grad(1)) grads[1] = sum_to(mul(g, a), b.shape());
    return grads;
  };
  op.kernels = MG_KERNELS(mul);
  op.out_may_alias_input = true;  // each element is read before its index is written
  op.reference = mul_reference;
  op.cases = mul_cases;
  op.error_cases = elementwise_binary_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
