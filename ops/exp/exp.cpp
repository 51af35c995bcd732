// exp: out = e^x, elementwise.
//   x [..X] -> out [..X]
// Backward: the upstream gradient times e^x (mul of grad and exp(x): exp is recomputed, since
// a backward rule sees the inputs, not the output).
#include "exp/exp.h"

#include "common/define_op.h"
#include "common/unary.h"
#include "mul/mul.h"

namespace mg {

MG_DECLARE_KERNELS(exp);
Tensor exp_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor exp(const Tensor& x) {
  static const OpDef& op = builtin_op("exp");
  return apply_op(op, {x});
}

void register_exp(OpRegistry& registry) {
  OpDef op = unary_op("exp", "e^x, elementwise");
  op.backward_reads = {"result"};  // d exp(x) = exp(x) dx: no second exp
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{mul(ctx.grad_out, ctx.result())};
  };
  op.kernels = MG_KERNELS(exp);
  op.reference = exp_reference;
  op.cases = [] {
    using I = InputSpec;
    auto cases = unary_cases([](Shape shape) { return I::real(std::move(shape)); });
    // Each case keeps its results within a few orders of magnitude: finite differences of
    // sum(out * R) carry rounding noise in proportion to the largest term, which would swamp
    // the gradient of the tiny ones.
    cases.push_back({"around_zero", {I::real({7}).with_values({-8, -2, -1e-3, 0, 1e-3, 2, 8})}});
    cases.push_back({"large_results", {I::real({3}).with_values({15, 18.5, 20})}});  // e^20 = 4.9e8
    // e^-100 is an f32 subnormal and e^-200 is 0 in f32 (no underflow error).
    cases.push_back({"tiny_results", {I::real({3}).with_values({-200, -100, -50})}});
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
