// momentum_update: SGD's momentum buffer, elementwise, as torch.optim.SGD.
//   buf [..X], grad [..X], param [..X] -> out [..X]
//   d = grad + wd * param; out = first_step ? d : momentum * buf + (1 - dampening) * d
// Written in place over buf by the optimizer (optim/sgd.h). Not differentiable.
#include "momentum_update/momentum_update.h"

#include <limits>

#include "common/define_op.h"
#include "common/update.h"

namespace mg {

MG_DECLARE_KERNELS(momentum_update);
Tensor momentum_update_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor momentum_update(const Tensor& buf, const Tensor& grad, const Tensor& param,
                       const MomentumUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("momentum_update");
  return apply_op(op, {buf, grad, param}, attrs);
}

namespace {

std::vector<OpCase> momentum_update_cases() {
  using I = InputSpec;
  using A = MomentumUpdateAttrs;
  std::vector<OpCase> cases;
  auto inputs = [](const Shape& s) {
    return std::vector<I>{I::real(s).no_grad(), I::real(s).no_grad(), I::real(s).no_grad()};
  };
  for (const auto& [name, s] : update_case_shapes()) {
    cases.push_back({name, inputs(s), A{0.9, 0.1, 0.01, false}});
  }
  const Shape s{4, 5};
  cases.push_back({"first_step", inputs(s), A{0.9, 0.1, 0.01, true}});
  cases.push_back({"first_step_no_decay", inputs(s), A{0.9, 0.0, 0.0, true}});
  cases.push_back({"no_dampening", inputs(s), A{0.9, 0.0, 0.0, false}});
  cases.push_back({"full_dampening", inputs(s), A{0.5, 1.0, 0.1, false}});
  cases.push_back({"zero_momentum", inputs(s), A{0.0, 0.0, 0.1, false}});
  return cases;
}

std::vector<ErrorCase> momentum_update_error_cases() {
  using I = InputSpec;
  using A = MomentumUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), I::real({3})};
  return std::vector<ErrorCase>{
      {"grad_shape", {I::real({3}), I::real({1, 3}), I::real({3})}, A{}, "argument 'grad'"},
      {"param_dtype",
       {I::real({3}), I::real({3}), I::real({3}).with_dtype(DType::f64)},
       A{},
       "dtype f32 (as the other inputs)"},
      {"integer_grad", {I::real({3}), I::ids({3}, 4), I::real({3})}, A{}, "floating-point"},
      {"negative_momentum", ok, A{-0.9}, "argument 'momentum'"},
      {"dampening_above_one", ok, A{0.9, 1.5}, "argument 'dampening'"},
      {"infinite_weight_decay", ok, A{0.9, 0.0, INFINITY}, "argument 'weight_decay'"},
  };
}

}  // namespace

void register_momentum_update(OpRegistry& registry) {
  OpDef op = update_op("momentum_update",
                       "SGD's momentum buffer: momentum * buf + (1 - dampening) * (grad + wd * p)",
                       {"buf", "grad", "param"});
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
    constexpr double kMax = std::numeric_limits<double>::max();
    check_attr_in("momentum_update", "momentum", a.momentum, 0.0, kMax);
    check_attr_in("momentum_update", "dampening", a.dampening, 0.0, 1.0);
    check_attr_in("momentum_update", "weight_decay", a.weight_decay, 0.0, kMax);
    return update_infer(self, in);
  };
  op.kernels = MG_KERNELS(momentum_update);
  op.reference = momentum_update_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
    return fmt::format("momentum={}, dampening={}, weight_decay={}, first_step={}", a.momentum,
                       a.dampening, a.weight_decay, a.first_step);
  };
  op.cases = momentum_update_cases;
  op.error_cases = momentum_update_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
