// log: out = ln x, elementwise (-inf at 0 and NaN below it, as IEEE and PyTorch: no error).
//   x [..X] -> out [..X]
// Backward: the upstream gradient divided by x (div).
#include "log/log.h"

#include "common/define_op.h"
#include "common/unary.h"
#include "div/div.h"

namespace mg {

MG_DECLARE_KERNELS(log);
Tensor log_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor log(const Tensor& x) {
  static const OpDef& op = builtin_op("log");
  return apply_op(op, {x});
}

namespace {

// Inputs in [0.5, 3] for the shared shapes: away from 0, where finite differences would need
// a smaller step, and never negative (NaN fails every check).
InputSpec positive_input(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = 0.5 + 2.5 * static_cast<double>((i * 37) % 101) / 100.0;
  }
  return InputSpec::real(std::move(shape)).with_values(std::move(values));
}

}  // namespace

void register_log(OpRegistry& registry) {
  OpDef op = unary_op("log", "the natural logarithm of x, elementwise");
  op.backward_reads = {"x"};
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{div(ctx.grad_out, ctx.input(0))};
  };
  op.kernels = MG_KERNELS(log);
  op.reference = log_reference;
  op.cases = [] {
    using I = InputSpec;
    auto cases = unary_cases(positive_input);
    // Small and large inputs, and both sides of 1 (where the result changes sign).
    cases.push_back(
        {"wide_range", {I::real({8}).with_values({1e-3, 0.1, 0.9, 1, 1.1, 10, 1e3, 1e6})}});
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
