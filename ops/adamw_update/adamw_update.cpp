// adamw_update: AdamW's parameter step from its bias-corrected moments, elementwise.
//   param [..X], m [..X], v [..X] (v >= 0) -> out [..X]
//   out = param * (1 - lr * wd) - lr * (m / c1) / (sqrt(v / c2) + eps)
// Written in place over param by the optimizer (optim/adamw.h). Not differentiable.
#include "adamw_update/adamw_update.h"

#include <limits>

#include "common/define_op.h"
#include "common/update.h"

namespace mg {

MG_DECLARE_KERNELS(adamw_update);
Tensor adamw_update_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor adamw_update(const Tensor& param, const Tensor& m, const Tensor& v,
                    const AdamWUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("adamw_update");
  return apply_op(op, {param, m, v}, attrs);
}

namespace {

std::vector<OpCase> adamw_update_cases() {
  using I = InputSpec;
  using A = AdamWUpdateAttrs;
  // Step 3 with PyTorch's defaults, lr 0.1 to make the step visible.
  const A step3{0.1, 1 - 0.9 * 0.9 * 0.9, 1 - 0.999 * 0.999 * 0.999, 1e-8, 0.01};
  std::vector<OpCase> cases;
  for (const auto& [name, s] : update_case_shapes()) {
    cases.push_back(
        {name, {I::real(s).no_grad(), I::real(s).no_grad(), spread_input(s, 0.01)}, step3});
  }
  const Shape s{4, 5};
  auto inputs = [&](double v_lo) {
    return std::vector<I>{I::real(s).no_grad(), I::real(s).no_grad(), spread_input(s, v_lo)};
  };
  cases.push_back({"first_step", inputs(0.01), A{1e-3, 0.1, 0.001, 1e-8, 0.01}});
  cases.push_back({"no_weight_decay", inputs(0.01), A{0.1, 0.5, 0.2, 1e-8, 0.0}});
  cases.push_back({"zero_lr", inputs(0.01), A{0.0, 0.5, 0.2, 1e-8, 0.01}});
  cases.push_back({"large_eps", inputs(0.0), A{0.1, 1.0, 1.0, 0.5, 0.1}});
  // v = 0 exactly (a gradient that was always 0): the step is m / eps.
  cases.push_back({"zero_v",
                   {I::real({3}).no_grad(), I::real({3}).no_grad(),
                    I::real({3}).with_values({0, 0, 0}).no_grad()},
                   A{0.1, 0.5, 0.2, 1e-3, 0.01}});
  return cases;
}

std::vector<ErrorCase> adamw_update_error_cases() {
  using I = InputSpec;
  using A = AdamWUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), spread_input({3}, 0.1)};
  return std::vector<ErrorCase>{
      {"m_shape", {I::real({3}), I::real({4}), spread_input({3}, 0.1)}, A{}, "argument 'm'"},
      {"v_shape",
       {I::real({2, 3}), I::real({2, 3}), spread_input({3, 2}, 0.1)},
       A{},
       "shape [2, 3] (as param)"},
      {"v_dtype",
       {I::real({3}), I::real({3}), spread_input({3}, 0.1).with_dtype(DType::f64)},
       A{},
       "dtype f32 (as the other inputs)"},
      {"integer_param",
       {I::ids({3}, 4), I::real({3}), spread_input({3}, 0.1)},
       A{},
       "floating-point"},
      {"negative_lr", ok, A{-1e-3}, "argument 'lr'"},
      {"zero_correction", ok, A{1e-3, 0.0}, "argument 'beta1_correction'"},
      {"correction_above_one", ok, A{1e-3, 1.0, 1.5}, "in (0, 1]"},
      {"nan_eps", ok, A{1e-3, 1.0, 1.0, std::nan("")}, "argument 'eps'"},
      {"negative_weight_decay", ok, A{1e-3, 1.0, 1.0, 1e-8, -0.1}, "argument 'weight_decay'"},
  };
}

}  // namespace

void register_adamw_update(OpRegistry& registry) {
  OpDef op = update_op("adamw_update",
                       "AdamW's step: param * (1 - lr * wd) - lr * m_hat / (sqrt(v_hat) + eps)",
                       {"param", "m", "v"});
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
    constexpr double kMax = std::numeric_limits<double>::max();
    check_attr_in("adamw_update", "lr", a.lr, 0.0, kMax);
    check_attr_in("adamw_update", "eps", a.eps, 0.0, kMax);
    check_attr_in("adamw_update", "weight_decay", a.weight_decay, 0.0, kMax);
    // A correction of 0 (step 0) would divide by zero.
    for (auto [name, c] : {std::pair{"beta1_correction", a.beta1_correction},
                           std::pair{"beta2_correction", a.beta2_correction}}) {
      MG_CHECK(c > 0 && c <= 1, "adamw_update", name, "a bias correction 1 - beta^t in (0, 1]",
               "{}", c);
    }
    return update_infer(self, in);
  };
  op.kernels = MG_KERNELS(adamw_update);
  op.reference = adamw_update_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
    return fmt::format("lr={}, beta1_correction={}, beta2_correction={}, eps={}, weight_decay={}",
                       a.lr, a.beta1_correction, a.beta2_correction, a.eps, a.weight_decay);
  };
  op.cases = adamw_update_cases;
  op.error_cases = adamw_update_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
