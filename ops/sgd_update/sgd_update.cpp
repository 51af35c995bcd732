// sgd_update: SGD's parameter step, elementwise, as torch.optim.SGD.
//   param [..X], grad [..X], buf [..X] -> out [..X]
//   d = grad + wd * param; d = momentum ? (nesterov ? d + momentum * buf : buf) : d
//   out = param - lr * d
// Written in place over param by the optimizer (optim/sgd.h). Not differentiable.
#include "sgd_update/sgd_update.h"

#include <limits>

#include "common/define_op.h"
#include "common/update.h"

namespace mg {

MG_DECLARE_KERNELS(sgd_update);
Tensor sgd_update_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                  const SgdUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("sgd_update");
  return apply_op(op, {param, grad, buf}, attrs);
}

namespace {

std::vector<OpCase> sgd_update_cases() {
  using I = InputSpec;
  using A = SgdUpdateAttrs;
  std::vector<OpCase> cases;
  auto inputs = [](const Shape& s) {
    return std::vector<I>{I::real(s).no_grad(), I::real(s).no_grad(), I::real(s).no_grad()};
  };
  for (const auto& [name, s] : update_case_shapes()) {
    cases.push_back({name, inputs(s), A{0.1, 0.01, 0.9, false}});
  }
  const Shape s{4, 5};
  cases.push_back({"plain", inputs(s), A{0.1, 0.0, 0.0, false}});
  cases.push_back({"plain_weight_decay", inputs(s), A{0.1, 0.05, 0.0, false}});
  cases.push_back({"nesterov", inputs(s), A{0.1, 0.0, 0.9, true}});
  cases.push_back({"nesterov_weight_decay", inputs(s), A{0.1, 0.05, 0.9, true}});
  cases.push_back({"zero_lr", inputs(s), A{0.0, 0.05, 0.9, false}});
  return cases;
}

std::vector<ErrorCase> sgd_update_error_cases() {
  using I = InputSpec;
  using A = SgdUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), I::real({3})};
  return std::vector<ErrorCase>{
      {"buf_shape", {I::real({2, 2}), I::real({2, 2}), I::real({4})}, A{}, "argument 'buf'"},
      {"grad_dtype",
       {I::real({3}), I::real({3}).with_dtype(DType::f64), I::real({3})},
       A{},
       "dtype f32 (as the other inputs)"},
      {"integer_param", {I::ids({3}, 4), I::real({3}), I::real({3})}, A{}, "floating-point"},
      {"negative_lr", ok, A{-0.1}, "argument 'lr'"},
      {"nan_momentum", ok, A{0.1, 0.0, std::nan("")}, "argument 'momentum'"},
      {"nesterov_without_momentum", ok, A{0.1, 0.0, 0.0, true}, "argument 'nesterov'"},
  };
}

}  // namespace

void register_sgd_update(OpRegistry& registry) {
  OpDef op = update_op("sgd_update",
                       "SGD's step: param - lr * (grad + wd * param, or its momentum buffer)",
                       {"param", "grad", "buf"});
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
    constexpr double kMax = std::numeric_limits<double>::max();
    check_attr_in("sgd_update", "lr", a.lr, 0.0, kMax);
    check_attr_in("sgd_update", "weight_decay", a.weight_decay, 0.0, kMax);
    check_attr_in("sgd_update", "momentum", a.momentum, 0.0, kMax);
    MG_CHECK(!a.nesterov || a.momentum > 0, "sgd_update", "nesterov",
             "a momentum > 0 with Nesterov momentum", "momentum {}", a.momentum);
    return update_infer(self, in);
  };
  op.kernels = MG_KERNELS(sgd_update);
  op.reference = sgd_update_reference;
  op.describe_attrs = [](const std::any& attrs) {
    const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
    return fmt::format("lr={}, weight_decay={}, momentum={}, nesterov={}", a.lr, a.weight_decay,
                       a.momentum, a.nesterov);
  };
  op.cases = sgd_update_cases;
  op.error_cases = sgd_update_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
