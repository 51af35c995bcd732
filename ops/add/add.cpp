// add: out = a + b with NumPy broadcasting.
//   a [..A], b [..B] -> out [broadcast(A, B)]
// Backward: each input gets the upstream gradient summed back to its own shape (sum_to).
#include "add/add.h"

#include "common/broadcast.h"
#include "common/define_op.h"
#include "sum_to/sum_to.h"

namespace mg {

MG_DECLARE_KERNELS(add);
Tensor add_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor add(const Tensor& a, const Tensor& b) {
  static const OpDef& op = builtin_op("add");
  return apply_op(op, {a, b});
}

void register_add(OpRegistry& registry) {
  OpDef op;
  op.name = "add";
  op.summary = "a + b with NumPy broadcasting";
  op.inputs = {"a", "b"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any&) {
    check_floating(self, 0, in[0]);
    check_floating(self, 1, in[1]);
    check_same_dtype(self, 1, in[1], in[0].dtype());
    Shape out;
    MG_CHECK(broadcast_shapes(in[0].shape(), in[1].shape(), out), "add", "b",
             fmt::format("a shape broadcastable with a's {}", shape_str(in[0].shape())), "{}",
             shape_str(in[1].shape()));
    return OutputSpec{out, in[0].dtype()};
  };
  op.backward = [](const BackwardContext& ctx) {
    std::vector<Tensor> grads(2);
    for (std::size_t i = 0; i < 2; ++i) {
      if (ctx.needs_grad(i)) grads[i] = sum_to(ctx.grad_out, ctx.inputs[i].shape());
    }
    return grads;
  };
  op.kernels = MG_KERNELS(add);
  op.reference = add_reference;
  op.cases = [] {
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
    };
  };
  op.error_cases = [] {
    using I = InputSpec;
    return std::vector<ErrorCase>{
        {"shape_mismatch", {I::real({2, 3}), I::real({4})}, {}, "broadcastable"},
        {"dtype_mix",
         {I::real({2, 3}).with_dtype(DType::f32), I::real({2, 3}).with_dtype(DType::f64)},
         {},
         "dtype f32"},
        {"integer_input", {I::ids({2, 3}, 5), I::real({2, 3})}, {}, "floating-point"},
    };
  };
  registry.add(std::move(op));
}

}  // namespace mg
