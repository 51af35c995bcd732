// The optimizer update family: moving_average, adamw_update, momentum_update and sgd_update,
// one row each. A row names the op, its inputs, its functor (update_kernels.h), the check of
// its attributes, and its cases; the family gives every row its shape rule (inputs of one
// shape and float dtype), kernels, naive reference and case shapes. Not differentiable: no
// derivative, and every input is made without a gradient.
//   N elements; in0 [..X], in1 [..X] (, in2 [..X]) -> out [..X]
#include "update/update.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "update/update_kernels.h"

namespace mg {

Tensor moving_average(const Tensor& avg, const Tensor& x, double decay, bool squared) {
  static const OpDef& op = builtin_op("moving_average");
  return apply_op(op, {avg, x}, MovingAverageAttrs{decay, squared});
}
Tensor adamw_update(const Tensor& param, const Tensor& m, const Tensor& v,
                    const AdamWUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("adamw_update");
  return apply_op(op, {param, m, v}, attrs);
}
Tensor momentum_update(const Tensor& buf, const Tensor& grad, const Tensor& param,
                       const MomentumUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("momentum_update");
  return apply_op(op, {buf, grad, param}, attrs);
}
Tensor sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                  const SgdUpdateAttrs& attrs) {
  static const OpDef& op = builtin_op("sgd_update");
  return apply_op(op, {param, grad, buf}, attrs);
}

namespace {

using I = InputSpec;
constexpr double kMax = std::numeric_limits<double>::max();

// Throws mg::Error naming op and attribute unless `value` is finite and in [lo, hi].
void check_attr_in(std::string_view op, std::string_view attr, double value, double lo, double hi) {
  MG_CHECK(std::isfinite(value) && value >= lo && value <= hi, std::string(op), std::string(attr),
           hi == kMax ? fmt::format("a finite number >= {}", lo)
                      : fmt::format("a finite number in [{}, {}]", lo, hi),
           "{}", value);
}

// Floating-point inputs of one dtype and one shape (the first input's).
OutputSpec update_infer(const OpDef& self, std::span<const Tensor> in) {
  for (std::size_t i = 0; i < in.size(); ++i) check_floating(self, i, in[i]);
  for (std::size_t i = 1; i < in.size(); ++i) {
    check_same_dtype(self, i, in[i], in[0].dtype());
    MG_CHECK(in[i].shape() == in[0].shape(), self.name, self.inputs[i],
             fmt::format("shape {} (as {})", shape_str(in[0].shape()), self.inputs[0]), "{}",
             shape_str(in[i].shape()));
  }
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

// The naive reference: one plain loop through the f64 accessors applying the row's functor.
template <template <typename> class Fn>
Tensor update_reference(std::span<const Tensor> in, const std::any& attrs) {
  const Fn<double> fn = Fn<double>::from(attrs);
  Tensor out = Tensor::empty(in[0].shape(), in[0].dtype());
  for (std::int64_t i = 0; i < out.numel(); ++i) {
    if constexpr (Fn<double>::kArity == 3) {
      out.set_flat(i, fn(in[0].at_flat(i), in[1].at_flat(i), in[2].at_flat(i)));
    } else {
      out.set_flat(i, fn(in[0].at_flat(i), in[1].at_flat(i)));
    }
  }
  return out;
}

// A case input of `shape` with values in [lo, lo + 1.5), spread over that range: for inputs
// that must stay non-negative, such as Adam's second moment.
InputSpec spread(Shape shape, double lo) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = lo + 1.5 * static_cast<double>((i * 7919) % 1000) / 1000.0;
  }
  return I::real(std::move(shape)).with_values(std::move(values)).no_grad();
}
InputSpec plain(Shape shape) { return I::real(std::move(shape)).no_grad(); }
std::vector<I> plain3(const Shape& s) { return {plain(s), plain(s), plain(s)}; }

// The shapes every row is tested on: a vector, a matrix, rank 3, size-1 axes, a scalar, no
// elements, and one large enough to be split across threads.
const std::pair<const char*, Shape> kShapes[] = {
    {"vector", {7}},     {"matrix", {3, 5}}, {"rank3", {2, 3, 4}},    {"size1", {1, 1}},
    {"scalar", Shape{}}, {"empty", {0, 3}},  {"threaded", {64, 1024}}};

// moving_average: avg.lerp_(x, 1 - decay), or avg.mul_(decay).addcmul_(x, x, 1 - decay).
std::vector<OpCase> moving_average_cases() {
  using A = MovingAverageAttrs;
  std::vector<OpCase> cases;
  for (bool squared : {false, true}) {
    const std::string kind = squared ? "squared_" : "";
    for (const auto& [name, s] : kShapes) {
      cases.push_back({kind + name,
                       {squared ? spread(s, 0.0) : plain(s), plain(s)},
                       A{squared ? 0.999 : 0.9, squared}});
    }
    const Shape s{4, 3};
    cases.push_back({kind + "decay_zero", {plain(s), plain(s)}, A{0.0, squared}});
    cases.push_back({kind + "decay_one", {plain(s), plain(s)}, A{1.0, squared}});
    // 1 - decay >= 0.5: lerp's second form.
    cases.push_back({kind + "large_weight", {plain(s), plain(s)}, A{0.3, squared}});
  }
  return cases;
}
std::vector<ErrorCase> moving_average_error_cases() {
  using A = MovingAverageAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3})};
  return std::vector<ErrorCase>{
      {"shape_mismatch", {I::real({3, 2}), I::real({2, 3})}, A{}, "shape [3, 2] (as avg)"},
      {"decay_above_one", ok, A{1.5}, "argument 'decay'"},
      {"negative_decay", ok, A{-0.1}, "in [0, 1]"},
      {"nan_decay", ok, A{std::nan("")}, "in [0, 1]"},
  };
}
void check_moving_average(const std::any& attrs) {
  check_attr_in("moving_average", "decay",
                attrs_as<MovingAverageAttrs>("moving_average", attrs).decay, 0.0, 1.0);
}
std::string describe_moving_average(const std::any& attrs) {
  const auto& a = attrs_as<MovingAverageAttrs>("moving_average", attrs);
  return fmt::format("decay={}, squared={}", a.decay, a.squared);
}

// adamw_update: step 3 with PyTorch's defaults, lr 0.1 to make the step visible; v >= 0.
std::vector<OpCase> adamw_update_cases() {
  using A = AdamWUpdateAttrs;
  const A step3{0.1, 1 - 0.9 * 0.9 * 0.9, 1 - 0.999 * 0.999 * 0.999, 1e-8, 0.01};
  std::vector<OpCase> cases;
  for (const auto& [name, s] : kShapes)
    cases.push_back({name, {plain(s), plain(s), spread(s, 0.01)}, step3});
  const Shape s{4, 5};
  auto inputs = [&](double v_lo) { return std::vector<I>{plain(s), plain(s), spread(s, v_lo)}; };
  cases.push_back({"first_step", inputs(0.01), A{1e-3, 0.1, 0.001, 1e-8, 0.01}});
  cases.push_back({"no_weight_decay", inputs(0.01), A{0.1, 0.5, 0.2, 1e-8, 0.0}});
  cases.push_back({"zero_lr", inputs(0.01), A{0.0, 0.5, 0.2, 1e-8, 0.01}});
  cases.push_back({"large_eps", inputs(0.0), A{0.1, 1.0, 1.0, 0.5, 0.1}});
  // v = 0 exactly (a gradient that was always 0): the step is m / eps.
  cases.push_back({"zero_v",
                   {plain({3}), plain({3}), I::real({3}).with_values({0, 0, 0}).no_grad()},
                   A{0.1, 0.5, 0.2, 1e-3, 0.01}});
  return cases;
}
std::vector<ErrorCase> adamw_update_error_cases() {
  using A = AdamWUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), spread({3}, 0.1)};
  return std::vector<ErrorCase>{
      {"m_shape", {I::real({3}), I::real({4}), spread({3}, 0.1)}, A{}, "argument 'm'"},
      {"v_shape",
       {I::real({2, 3}), I::real({2, 3}), spread({3, 2}, 0.1)},
       A{},
       "shape [2, 3] (as param)"},
      {"negative_lr", ok, A{-1e-3}, "argument 'lr'"},
      {"zero_correction", ok, A{1e-3, 0.0}, "argument 'beta1_correction'"},
      {"correction_above_one", ok, A{1e-3, 1.0, 1.5}, "in (0, 1]"},
      {"nan_eps", ok, A{1e-3, 1.0, 1.0, std::nan("")}, "argument 'eps'"},
      {"negative_weight_decay", ok, A{1e-3, 1.0, 1.0, 1e-8, -0.1}, "argument 'weight_decay'"},
  };
}
void check_adamw_update(const std::any& attrs) {
  const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
  check_attr_in("adamw_update", "lr", a.lr, 0.0, kMax);
  check_attr_in("adamw_update", "eps", a.eps, 0.0, kMax);
  check_attr_in("adamw_update", "weight_decay", a.weight_decay, 0.0, kMax);
  // A correction of 0 (step 0) would divide by zero.
  for (auto [name, c] : {std::pair{"beta1_correction", a.beta1_correction},
                         std::pair{"beta2_correction", a.beta2_correction}}) {
    MG_CHECK(c > 0 && c <= 1, "adamw_update", name, "a bias correction 1 - beta^t in (0, 1]", "{}",
             c);
  }
}
std::string describe_adamw_update(const std::any& attrs) {
  const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
  return fmt::format("lr={}, beta1_correction={}, beta2_correction={}, eps={}, weight_decay={}",
                     a.lr, a.beta1_correction, a.beta2_correction, a.eps, a.weight_decay);
}

std::vector<OpCase> momentum_update_cases() {
  using A = MomentumUpdateAttrs;
  std::vector<OpCase> cases;
  for (const auto& [name, s] : kShapes)
    cases.push_back({name, plain3(s), A{0.9, 0.1, 0.01, false}});
  const Shape s{4, 5};
  cases.push_back({"first_step", plain3(s), A{0.9, 0.1, 0.01, true}});
  cases.push_back({"first_step_no_decay", plain3(s), A{0.9, 0.0, 0.0, true}});
  cases.push_back({"no_dampening", plain3(s), A{0.9, 0.0, 0.0, false}});
  cases.push_back({"full_dampening", plain3(s), A{0.5, 1.0, 0.1, false}});
  cases.push_back({"zero_momentum", plain3(s), A{0.0, 0.0, 0.1, false}});
  return cases;
}
std::vector<ErrorCase> momentum_update_error_cases() {
  using A = MomentumUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), I::real({3})};
  return std::vector<ErrorCase>{
      {"grad_shape", {I::real({3}), I::real({1, 3}), I::real({3})}, A{}, "argument 'grad'"},
      {"negative_momentum", ok, A{-0.9}, "argument 'momentum'"},
      {"dampening_above_one", ok, A{0.9, 1.5}, "argument 'dampening'"},
      {"infinite_weight_decay", ok, A{0.9, 0.0, INFINITY}, "argument 'weight_decay'"},
  };
}
void check_momentum_update(const std::any& attrs) {
  const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
  check_attr_in("momentum_update", "momentum", a.momentum, 0.0, kMax);
  check_attr_in("momentum_update", "dampening", a.dampening, 0.0, 1.0);
  check_attr_in("momentum_update", "weight_decay", a.weight_decay, 0.0, kMax);
}
std::string describe_momentum_update(const std::any& attrs) {
  const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
  return fmt::format("momentum={}, dampening={}, weight_decay={}, first_step={}", a.momentum,
                     a.dampening, a.weight_decay, a.first_step);
}

std::vector<OpCase> sgd_update_cases() {
  using A = SgdUpdateAttrs;
  std::vector<OpCase> cases;
  for (const auto& [name, s] : kShapes)
    cases.push_back({name, plain3(s), A{0.1, 0.01, 0.9, false}});
  const Shape s{4, 5};
  cases.push_back({"plain", plain3(s), A{0.1, 0.0, 0.0, false}});
  cases.push_back({"plain_weight_decay", plain3(s), A{0.1, 0.05, 0.0, false}});
  cases.push_back({"nesterov", plain3(s), A{0.1, 0.0, 0.9, true}});
  cases.push_back({"nesterov_weight_decay", plain3(s), A{0.1, 0.05, 0.9, true}});
  cases.push_back({"zero_lr", plain3(s), A{0.0, 0.05, 0.9, false}});
  return cases;
}
std::vector<ErrorCase> sgd_update_error_cases() {
  using A = SgdUpdateAttrs;
  const std::vector<I> ok = {I::real({3}), I::real({3}), I::real({3})};
  return std::vector<ErrorCase>{
      {"buf_shape", {I::real({2, 2}), I::real({2, 2}), I::real({4})}, A{}, "argument 'buf'"},
      {"negative_lr", ok, A{-0.1}, "argument 'lr'"},
      {"nan_momentum", ok, A{0.1, 0.0, std::nan("")}, "argument 'momentum'"},
      {"nesterov_without_momentum", ok, A{0.1, 0.0, 0.0, true}, "argument 'nesterov'"},
  };
}
void check_sgd_update(const std::any& attrs) {
  const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
  check_attr_in("sgd_update", "lr", a.lr, 0.0, kMax);
  check_attr_in("sgd_update", "weight_decay", a.weight_decay, 0.0, kMax);
  check_attr_in("sgd_update", "momentum", a.momentum, 0.0, kMax);
  MG_CHECK(!a.nesterov || a.momentum > 0, "sgd_update", "nesterov",
           "a momentum > 0 with Nesterov momentum", "momentum {}", a.momentum);
}
std::string describe_sgd_update(const std::any& attrs) {
  const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
  return fmt::format("lr={}, weight_decay={}, momentum={}, nesterov={}", a.lr, a.weight_decay,
                     a.momentum, a.nesterov);
}

// One row of the table: everything but the functor, which picks the kernels and reference.
struct UpdateRow {
  const char* name;
  const char* summary;
  std::vector<std::string> inputs;
  void (*check_attrs)(const std::any&);
  std::string (*describe_attrs)(const std::any&);
  std::vector<OpCase> (*cases)();
  std::vector<ErrorCase> (*error_cases)();
};

template <template <typename> class Fn>
OpDef update_op(UpdateRow row) {
  OpDef op;
  op.name = row.name;
  op.summary = row.summary;
  op.inputs = std::move(row.inputs);
  op.infer = [check = row.check_attrs](const OpDef& self, std::span<const Tensor> in,
                                       const std::any& attrs) {
    check(attrs);
    return update_infer(self, in);
  };
  op.out_may_alias_input = true;  // each element is read, in every input, before it is written
  op.kernels = device_kernels(update_cpu<Fn>, MG_CUDA_KERNEL(update_cuda<Fn>));
  op.reference = update_reference<Fn>;
  op.describe_attrs = row.describe_attrs;
  op.cases = row.cases;
  op.error_cases = row.error_cases;
  return op;
}

}  // namespace

void register_update(OpRegistry& registry) {
  registry.add(update_op<MovingAverageFn>(
      {"moving_average",
       "decay * avg + (1 - decay) * x (or x * x): Adam's moments, in place",
       {"avg", "x"},
       check_moving_average,
       describe_moving_average,
       moving_average_cases,
       moving_average_error_cases}));
  registry.add(update_op<AdamWUpdateFn>(
      {"adamw_update",
       "AdamW's step: param * (1 - lr * wd) - lr * m_hat / (sqrt(v_hat) + eps)",
       {"param", "m", "v"},
       check_adamw_update,
       describe_adamw_update,
       adamw_update_cases,
       adamw_update_error_cases}));
  registry.add(update_op<MomentumUpdateFn>(
      {"momentum_update",
       "SGD's momentum buffer: momentum * buf + (1 - dampening) * (grad + wd * p)",
       {"buf", "grad", "param"},
       check_momentum_update,
       describe_momentum_update,
       momentum_update_cases,
       momentum_update_error_cases}));
  registry.add(update_op<SgdUpdateFn>(
      {"sgd_update",
       "SGD's step: param - lr * (grad + wd * param, or its momentum buffer)",
       {"param", "grad", "buf"},
       check_sgd_update,
       describe_sgd_update,
       sgd_update_cases,
       sgd_update_error_cases}));
}

}  // namespace mg
