// neg: out = -x, elementwise.
//   x [..X] -> out [..X]
// Backward: the upstream gradient negated (neg).
#include "neg/neg.h"

#include "common/define_op.h"
#include "common/unary.h"

namespace mg {

MG_DECLARE_KERNELS(neg);
Tensor neg_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor neg(const Tensor& x) {
  static const OpDef& op = builtin_op("neg");
  return apply_op(op, {x});
}

void register_neg(OpRegistry& registry) {
  OpDef op = unary_op("neg", "-x, elementwise");
  op.backward = [](const BackwardContext& ctx) { return std::vector<Tensor>{neg(ctx.grad_out)}; };
  op.kernels = MG_KERNELS(neg);
  op.reference = neg_reference;
  op.cases = [] {
    using I = InputSpec;
    auto cases = unary_cases([](Shape shape) { return I::real(std::move(shape)); });
    cases.push_back({"signed_zeros_tiny_and_large",
                     {I::real({6}).with_values({0.0, -0.0, 1e-30, -1e3, 3.5, -2.25})}});
    return cases;
  };
  op.error_cases = [] {
    using I = InputSpec;
    return std::vector<ErrorCase>{
        {"integer_input", {I::ids({2, 3}, 5)}, {}, "floating-point"},
    };
  };
  registry.add(std::move(op));
}

}  // namespace mg
