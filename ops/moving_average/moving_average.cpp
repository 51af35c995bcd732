// moving_average: out = decay * avg + (1 - decay) * (squared ? x * x : x), elementwise.
//   avg [..X], x [..X], decay in [0, 1] -> out [..X]
// The state of Adam's first (x = grad) and second (squared) moments, written in place over avg.
// Not differentiable: optimizer steps are never recorded.
#include "moving_average/moving_average.h"

#include "common/define_op.h"
#include "common/update.h"

namespace mg {

MG_DECLARE_KERNELS(moving_average);
Tensor moving_average_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor moving_average(const Tensor& avg, const Tensor& x, double decay, bool squared) {
  static const OpDef& op = builtin_op("moving_average");
  return apply_op(op, {avg, x}, MovingAverageAttrs{decay, squared});
}

namespace {

std::vector<OpCase> moving_average_cases() {
  using I = InputSpec;
  using A = MovingAverageAttrs;
  std::vector<OpCase> cases;
  for (bool squared : {false, true}) {
    const std::string kind = squared ? "squared_" : "";
    for (const auto& [name, s] : update_case_shapes()) {
      cases.push_back(
          {kind + name,
           {squared ? spread_input(s, 0.0) : I::real(s).no_grad(), I::real(s).no_grad()},
           A{squared ? 0.999 : 0.9, squared}});
    }
    cases.push_back({kind + "decay_zero",
                     {I::real({4, 3}).no_grad(), I::real({4, 3}).no_grad()},
                     A{0.0, squared}});
    cases.push_back({kind + "decay_one",
                     {I::real({4, 3}).no_grad(), I::real({4, 3}).no_grad()},
                     A{1.0, squared}});
    // 1 - decay >= 0.5: lerp's second form.
    cases.push_back({kind + "large_weight",
                     {I::real({4, 3}).no_grad(), I::real({4, 3}).no_grad()},
                     A{0.3, squared}});
  }
  return cases;
}

std::vector<ErrorCase> moving_average_error_cases() {
  using I = InputSpec;
  using A = MovingAverageAttrs;
  return std::vector<ErrorCase>{
      {"shape_mismatch", {I::real({3, 2}), I::real({2, 3})}, A{}, "shape [3, 2] (as avg)"},
      {"dtype_mismatch",
       {I::real({3}), I::real({3}).with_dtype(DType::f64)},
       A{},
       "dtype f32 (as the other inputs)"},
      {"integer_input", {I::real({3}), I::ids({3}, 4)}, A{}, "floating-point"},
      {"decay_above_one", {I::real({3}), I::real({3})}, A{1.5}, "argument 'decay'"},
      {"negative_decay", {I::real({3}), I::real({3})}, A{-0.1}, "in [0, 1]"},
      {"nan_decay", {I::real({3}), I::real({3})}, A{std::nan("")}, "in [0, 1]"},
  };
}

}  // namespace

void register_moving_average(OpRegistry& registry) {
  OpDef op =
      update_op("moving_average",
                "decay * avg + (1 - decay) * x (or x * x): Adam's moments, in place", {"avg", "x"});
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_attr_in("moving_average", "decay",
                  attrs_as<MovingAverageAttrs>("moving_average", attrs).decay, 0.0, 1.0);
    return update_infer(self, in);
  };
  op.kernels = MG_KERNELS(moving_average);
  op.reference = moving_average_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<MovingAverageAttrs>("moving_average", attrs);
    return fmt::format("decay={}, squared={}", a.decay, a.squared);
  };
  op.cases = moving_average_cases;
  op.error_cases = moving_average_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
