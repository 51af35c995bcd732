// add: out = a + b with NumPy broadcasting.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Backward: each input gets the upstream gradient summed back to its own shape (sum_to).
// The kernels, shape rule and error cases are the binary elementwise engine's
// (common/elementwise.h), shared with sub, mul and div.
#include "add/add.h"

#include "common/define_op.h"
#include "common/elementwise.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(add);
Tensor add_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor add(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("add");
  return apply_op(op, {a, b});
}

namespace {

std::vector<OpCase> add_cases() {
  using I = InputSpec;
  return std::vector<OpCase>{
      {"same_shape", {I::real({3, 4}), I::real({3, 4})}},
      {"batch_broadcast", {I::real({2, 3, 4}), I::real({3, 4})}},
      {"broadcast_first", {I::real({3, 4}), I::real({2, 3, 4})}},
      {"both_broadcast", {I::real({2, 1, 4}), I::real({3, 1})}},
      {"middle_axis", {I::real({2, 3, 4}), I::real({3, 1})}},
      {"outer_and_inner", {I::real({2, 1, 4, 1}), I::real({2, 3, 1, 5})}},
      {"size_one_dims", {I::real({1, 1}), I::real({1})}},
      {"scalar_like", {I::real({5, 3}), I::real({1})}},
      {"andrea_tok_plus_pos", {I::real({2, 16, 8}), I::real({16, 8})}},
      {"scalar", {I::real({}), I::real({2, 3})}},
      {"empty_rows", {I::real({0, 3}), I::real({3})}},
      // Repeated operands of 256+ elements take the repeated kernel on CUDA (16-byte loads
      // when the width allows, 257 does not).
      {"wide_rows", {I::real({3, 16, 32}), I::real({16, 32})}},
      {"wide_rows_first", {I::real({16, 32}), I::real({3, 16, 32})}},
      {"odd_width", {I::real({257}), I::real({2, 257})}},
  };
}

}  // namespace

void register_add(OpRegistry& registry) {
  OpDef op;
  op.name = "add";
  op.summary = "a + b with NumPy broadcasting";
  op.inputs = {"a", "b"};
  op.infer = elementwise_binary_infer;
  op.takes_layout = any_layout;  // the engine reads strides
  op.backward = [](const BackwardContext& ctx) {
    std::vector<Tensor> grads(2);
    for (std::size_t i = 0; i < 2; ++i) {
      if (ctx.needs_grad(i)) grads[i] = sum_to(ctx.grad_out, ctx.input_shape(i));
    }
    return grads;
  };
  op.kernels = MG_KERNELS(add);
  op.out_may_alias_input = true;  // each element is read before its index is written
  op.reference = add_reference;
  op.cases = add_cases;
  op.error_cases = elementwise_binary_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
