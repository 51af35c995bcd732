// The elementwise unary family: neg, scale, exp, log, the activations (relu, tanh, sigmoid,
// gelu in its two forms), the powers (sqrt, rsqrt, square, pow) and tensor-scalar arithmetic
// (add_scalar, rsub_scalar, div_scalar), one row each. A row names the op, its
// functor (unary_kernels.h), its derivative and what the derivative reads, and the cases at
// the edges of its function; the family gives every row its shape rule, kernels, naive
// reference and shared cases. scale adds a check of its factor.
//   x [..X] -> out [..X]
#include "unary/unary.h"

#include <cmath>
#include <functional>
#include <limits>

#include "binary/binary.h"
#include "common/broadcast_layout.h"
#include "common/define_op.h"
#include "unary/unary_kernels.h"

namespace mg {

Tensor neg(const Tensor& x) {
  static const OpDef& op = builtin_op("neg");
  return apply_op(op, {x});
}
Tensor scale(const Tensor& x, double factor) {
  static const OpDef& op = builtin_op("scale");
  return apply_op(op, {x}, ScaleAttrs{factor});
}
Tensor exp(const Tensor& x) {
  static const OpDef& op = builtin_op("exp");
  return apply_op(op, {x});
}
Tensor log(const Tensor& x) {
  static const OpDef& op = builtin_op("log");
  return apply_op(op, {x});
}

Tensor relu(const Tensor& x) {
  static const OpDef& op = builtin_op("relu");
  return apply_op(op, {x});
}
Tensor tanh(const Tensor& x) {
  static const OpDef& op = builtin_op("tanh");
  return apply_op(op, {x});
}
Tensor sigmoid(const Tensor& x) {
  static const OpDef& op = builtin_op("sigmoid");
  return apply_op(op, {x});
}
Tensor sqrt(const Tensor& x) {
  static const OpDef& op = builtin_op("sqrt");
  return apply_op(op, {x});
}
Tensor rsqrt(const Tensor& x) {
  static const OpDef& op = builtin_op("rsqrt");
  return apply_op(op, {x});
}
Tensor square(const Tensor& x) {
  static const OpDef& op = builtin_op("square");
  return apply_op(op, {x});
}
Tensor pow(const Tensor& x, double exponent) {
  static const OpDef& op = builtin_op("pow");
  return apply_op(op, {x}, ScalarAttrs{exponent});
}
Tensor add(const Tensor& x, double value) {
  static const OpDef& op = builtin_op("add_scalar");
  return apply_op(op, {x}, ScalarAttrs{value});
}
Tensor sub(const Tensor& x, double value) { return add(x, -value); }
Tensor rsub(const Tensor& x, double value) {
  static const OpDef& op = builtin_op("rsub_scalar");
  return apply_op(op, {x}, ScalarAttrs{value});
}
Tensor mul(const Tensor& x, double value) { return scale(x, value); }
Tensor div(const Tensor& x, double value) {
  static const OpDef& op = builtin_op("div_scalar");
  return apply_op(op, {x}, ScalarAttrs{value});
}

bool gelu_is_tanh(std::string_view op, std::string_view approximate) {
  MG_CHECK(approximate == "none" || approximate == "tanh", std::string(op), "approximate",
           "\"none\" or \"tanh\"", "\"{}\"", approximate);
  return approximate == "tanh";
}
Tensor gelu(const Tensor& x, std::string_view approximate) {
  static const OpDef& exact = builtin_op("gelu");
  static const OpDef& tanh_form = builtin_op("gelu_tanh");
  return apply_op(gelu_is_tanh("gelu", approximate) ? tanh_form : exact, {x});
}

namespace {

using Grads = std::vector<Tensor>;
using I = InputSpec;

OutputSpec unary_infer(const OpDef& self, std::span<const Tensor> in, const std::any&) {
  check_floating(self, 0, in[0]);
  return OutputSpec{in[0].shape(), in[0].dtype()};
}

// The naive reference: one plain loop through the f64 accessors applying the row's functor.
template <template <typename> class Fn>
Tensor unary_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const Fn<double> fn = make_unary_fn<Fn, double>(attrs);
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) out.set_flat(i, fn(x.at_flat(i)));
  return out;
}

// The shapes every row is tested on, each case one input made by `input` from its shape
// (InputSpec::real, or values inside the function's domain) and `attrs`: a vector, a matrix,
// rank 3, size-1 axes, a scalar, no elements, the model's activations, and one large enough to
// be split across threads (a sampled gradcheck).
// The edges of every row's function, checked forward only (OpCase::edge_values):
// infinities, NaN, signed zeros, and magnitudes whose results stay finite in f32 wherever the
// f64 reference's do.
OpCase edge_case(const std::any& attrs) {
  const double inf = INFINITY, nan = std::nan("");
  OpCase c{
      "edges",
      {I::real({10}).with_values({inf, -inf, nan, 0.0, -0.0, 1e15, -1e15, 1e-15, -1e-15, 2.5})},
      attrs};
  c.edge_values = true;
  return c;
}

std::vector<OpCase> unary_cases(InputSpec (*input)(Shape), const std::any& attrs = {}) {
  return std::vector<OpCase>{
      edge_case(attrs),
      {"vector", {input({7})}, attrs},
      {"matrix", {input({3, 4})}, attrs},
      {"rank3", {input({2, 3, 4})}, attrs},
      {"size_one_dims", {input({1, 1})}, attrs},
      {"scalar", {input({})}, attrs},
      {"empty", {input({0, 3})}, attrs},
      {"andrea_activations", {input({2, 16, 8})}, attrs},
      // 76800 elements: past threads_for's 32K per thread, so several threads each take a part
      // (on a machine with more than one core); 16 sampled gradient elements.
      {"threaded", {input({256, 300})}, attrs, 16},
  };
}
InputSpec real_x(Shape shape) { return I::real(std::move(shape)); }
// Inputs in [0.5, 3]: away from 0, where finite differences would need a smaller step, and
// never negative (NaN fails every check).
InputSpec positive(Shape shape) {
  std::vector<double> values(static_cast<std::size_t>(shape_numel(shape)));
  for (std::size_t i = 0; i < values.size(); ++i) {
    values[i] = 0.5 + 2.5 * static_cast<double>((i * 37) % 101) / 100.0;
  }
  return I::real(std::move(shape)).with_values(std::move(values));
}

std::vector<OpCase> neg_cases() {
  auto cases = unary_cases(real_x);
  cases.push_back({"signed_zeros_tiny_and_large",
                   {I::real({6}).with_values({0.0, -0.0, 1e-30, -1e3, 3.5, -2.25})}});
  return cases;
}

std::vector<OpCase> scale_cases() {
  using A = ScaleAttrs;
  auto cases = unary_cases(real_x, A{2.5});
  cases.push_back({"negative_factor", {I::real({3, 5})}, A{-0.75}});
  cases.push_back({"zero_factor", {I::real({3, 5})}, A{0.0}});
  cases.push_back({"unit_factor", {I::real({4})}, A{1.0}});
  // 0.1 is not exact in binary: f32 multiplies by float(0.1), within f32's tolerance.
  cases.push_back({"inexact_factor", {I::real({2, 16, 8})}, A{0.1}});
  return cases;
}

std::vector<ErrorCase> scale_error_cases() {
  using A = ScaleAttrs;
  return std::vector<ErrorCase>{
      {"nan_factor", {I::real({3})}, A{std::nan("")}, "argument 'factor'"},
      {"infinite_factor", {I::real({3})}, A{INFINITY}, "a finite factor"},
      {"negative_infinite_factor", {I::real({3})}, A{-INFINITY}, "a finite factor"},
      {"factor_past_f32",
       {I::real({3}).with_dtype(DType::f32)},
       A{1e39},
       "finite in x's dtype f32"},
  };
}

// The kernels compute in x's dtype: a factor past f32's range would turn into infinity.
OutputSpec scale_infer(const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
  OutputSpec out = unary_infer(self, in, attrs);
  const double factor = attrs_as<ScaleAttrs>("scale", attrs).factor;
  const double limit = out.dtype == DType::f32 ? std::numeric_limits<float>::max()
                                               : std::numeric_limits<double>::max();
  MG_CHECK(std::abs(factor) <= limit, "scale", "factor",
           fmt::format("a finite factor (finite in x's dtype {})", dtype_name(out.dtype)), "{}",
           factor);
  return out;
}

// Each case keeps its results within a few orders of magnitude: finite differences of
// sum(out * R) carry rounding noise in proportion to the largest term, which would swamp the
// gradient of the tiny ones.
std::vector<OpCase> exp_cases() {
  auto cases = unary_cases(real_x);
  cases.push_back({"around_zero", {I::real({7}).with_values({-8, -2, -1e-3, 0, 1e-3, 2, 8})}});
  cases.push_back({"large_results", {I::real({3}).with_values({15, 18.5, 20})}});  // e^20 = 4.9e8
  // e^-100 is an f32 subnormal and e^-200 is 0 in f32 (no underflow error).
  cases.push_back({"tiny_results", {I::real({3}).with_values({-200, -100, -50})}});
  return cases;
}

// Small and large inputs, and both sides of 1 (where the result changes sign).
std::vector<OpCase> log_cases() {
  auto cases = unary_cases(positive);
  cases.push_back(
      {"wide_range", {I::real({8}).with_values({1e-3, 0.1, 0.9, 1, 1.1, 10, 1e3, 1e6})}});
  return cases;
}

// Saturated inputs: the gradient of tanh, sigmoid and gelu vanishes (or goes to 1) there, and
// must not turn into NaN.
std::vector<OpCase> saturating_cases() {
  auto cases = unary_cases(real_x);
  cases.push_back({"saturated", {I::real({6}).with_values({-30, -20, -8, 8, 20, 30})}});
  cases.push_back({"around_zero", {I::real({5}).with_values({-1e-3, -1e-7, 1e-9, 1e-4, 0.5})}});
  return cases;
}
std::vector<OpCase> real_cases() { return unary_cases(real_x); }
std::vector<OpCase> positive_cases() { return unary_cases(positive); }

std::vector<OpCase> pow_cases() {
  using A = ScalarAttrs;
  auto cases = unary_cases(positive, A{1.7});
  cases.push_back({"square", {I::real({3, 5})}, A{2.0}});
  cases.push_back({"cube_negative_bases", {I::real({3, 5})}, A{3.0}});
  cases.push_back({"square_root", {positive({7})}, A{0.5}});
  cases.push_back({"negative_fractional", {positive({7})}, A{-1.5}});
  cases.push_back({"zero_exponent", {I::real({7})}, A{0.0}});  // gradient 0, as PyTorch's
  cases.push_back({"unit_exponent", {I::real({7})}, A{1.0}});
  return cases;
}

// One value of each sign and a non-dyadic one (not exact in binary), and inf at the edges.
std::vector<OpCase> scalar_cases(double value) {
  using A = ScalarAttrs;
  auto cases = unary_cases(real_x, A{value});
  cases.push_back({"negative_value", {I::real({3, 5})}, A{-3.0}});
  cases.push_back({"inexact_value", {I::real({2, 16, 8})}, A{0.1}});
  OpCase infinite{"infinite_value", {I::real({4})}, A{INFINITY}};
  infinite.edge_values = true;
  cases.push_back(std::move(infinite));
  return cases;
}

std::vector<OpCase> div_scalar_cases() {
  auto cases = scalar_cases(2.0);
  OpCase by_zero{"by_zero", {I::real({4}).with_values({1, -1, 0, 2})}, ScalarAttrs{0.0}};
  by_zero.edge_values = true;  // inf, -inf, NaN, inf: IEEE, as tensor division
  cases.push_back(std::move(by_zero));
  return cases;
}

// A row with a number (ScalarAttrs) named `arg`: a finite number past the dtype's range would
// turn into infinity in the kernels; inf and NaN are values like any.
std::function<OutputSpec(const OpDef&, std::span<const Tensor>, const std::any&)> scalar_infer(
    const char* arg) {
  return [arg](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    OutputSpec out = unary_infer(self, in, attrs);
    const double value = attrs_as<ScalarAttrs>(self.name, attrs).value;
    const double limit = out.dtype == DType::f32 ? std::numeric_limits<float>::max()
                                                 : std::numeric_limits<double>::max();
    MG_CHECK(!std::isfinite(value) || std::abs(value) <= limit, self.name, arg,
             fmt::format("a number finite in x's dtype {} (or inf or NaN)", dtype_name(out.dtype)),
             "{}", value);
    return out;
  };
}

template <template <typename> class Fn>
OpDef unary_op(const char* name, const char* summary, std::vector<std::string> backward_reads,
               Grads (*backward)(const BackwardContext&), std::vector<OpCase> (*cases)()) {
  OpDef op;
  op.name = name;
  op.summary = summary;
  op.inputs = {"x"};
  op.infer = unary_infer;
  op.out_may_alias_input = true;  // each element is read before its index is written
  // Views on every device; on CUDA up to the rank its strided kernel carries.
  op.takes_layout = [](std::size_t, const Tensor& x) {
    return x.device().is_cpu() || x.dim() <= kMaxBroadcastGroups;
  };
  op.backward_reads = std::move(backward_reads);
  op.backward = backward;
  op.kernels = device_kernels(unary_cpu<Fn>, MG_CUDA_KERNEL(unary_cuda<Fn>));
  op.reference = unary_reference<Fn>;
  op.cases = cases;
  return op;
}

// The activations, each derivative one pass of its *_backward row (binary.h).
void register_activations(OpRegistry& registry) {
  registry.add(unary_op<ReluFn>(
      "relu", "max(x, 0), elementwise", {"result"},
      [](const BackwardContext& ctx) { return Grads{relu_backward(ctx.grad_out, ctx.result())}; },
      real_cases));
  registry.add(unary_op<TanhFn>(
      "tanh", "tanh(x), elementwise", {"result"},
      [](const BackwardContext& ctx) { return Grads{tanh_backward(ctx.grad_out, ctx.result())}; },
      saturating_cases));
  registry.add(unary_op<SigmoidFn>(
      "sigmoid", "1 / (1 + e^-x), elementwise", {"result"},
      [](const BackwardContext& ctx) {
        return Grads{sigmoid_backward(ctx.grad_out, ctx.result())};
      },
      saturating_cases));
  registry.add(unary_op<GeluFn>(
      "gelu", "x * Phi(x), elementwise (gelu(x, \"none\"))", {"x"},
      [](const BackwardContext& ctx) {
        return Grads{gelu_backward(ctx.grad_out, ctx.input(0), "none")};
      },
      saturating_cases));
  registry.add(unary_op<GeluTanhFn>(
      "gelu_tanh", "GPT-2's tanh approximation of gelu, elementwise (gelu(x, \"tanh\"))", {"x"},
      [](const BackwardContext& ctx) {
        return Grads{gelu_backward(ctx.grad_out, ctx.input(0), "tanh")};
      },
      saturating_cases));
}

void register_powers(OpRegistry& registry) {
  // d sqrt(x) = dx / (2 sqrt(x)); d x^-1/2 = -x^-3/2 / 2 dx: both from the result.
  registry.add(unary_op<SqrtFn>(
      "sqrt", "the square root of x, elementwise", {"result"},
      [](const BackwardContext& ctx) { return Grads{div(ctx.grad_out, scale(ctx.result(), 2))}; },
      positive_cases));
  registry.add(unary_op<RsqrtFn>(
      "rsqrt", "1 / sqrt(x), elementwise", {"result"},
      [](const BackwardContext& ctx) {
        return Grads{mul(ctx.grad_out, scale(pow(ctx.result(), 3), -0.5))};
      },
      positive_cases));
  registry.add(unary_op<SquareFn>(
      "square", "x * x, elementwise", {"x"},
      [](const BackwardContext& ctx) { return Grads{mul(ctx.grad_out, scale(ctx.input(0), 2))}; },
      real_cases));
  OpDef pow_def = unary_op<PowFn>(
      "pow", "x^exponent, elementwise, for a number exponent", {"x"},
      [](const BackwardContext& ctx) {
        const double e = ctx.attrs_as<ScalarAttrs>().value;
        if (e == 0)
          return Grads{
              Tensor::zeros(ctx.grad_out.shape(), ctx.grad_out.dtype(), ctx.grad_out.device())};
        return Grads{mul(ctx.grad_out, scale(pow(ctx.input(0), e - 1), e))};
      },
      pow_cases);
  pow_def.infer = scalar_infer("exponent");
  pow_def.describe_attrs = [](const std::any& attrs) {
    return fmt::format("exponent={}", attrs_as<ScalarAttrs>("pow", attrs).value);
  };
  registry.add(std::move(pow_def));
}

// A row with a number `other`, as libtorch's add(Tensor, Scalar).
template <template <typename> class Fn>
OpDef scalar_op(const char* name, const char* summary, Grads (*backward)(const BackwardContext&),
                std::vector<OpCase> (*cases)()) {
  OpDef op = unary_op<Fn>(name, summary, {}, backward, cases);
  op.infer = scalar_infer("other");
  op.describe_attrs = [name = std::string(name)](const std::any& attrs) {
    return fmt::format("other={}", attrs_as<ScalarAttrs>(name, attrs).value);
  };
  op.error_cases = [] {
    return std::vector<ErrorCase>{{"other_past_f32",
                                   {I::real({3}).with_dtype(DType::f32)},
                                   ScalarAttrs{-1e39},
                                   "finite in x's dtype f32"}};
  };
  return op;
}

void register_scalar_arithmetic(OpRegistry& registry) {
  registry.add(scalar_op<AddScalarFn>(
      "add_scalar", "x + other, elementwise, for a number other",
      [](const BackwardContext& ctx) { return Grads{ctx.grad_out}; },
      [] { return scalar_cases(1.5); }));
  registry.add(scalar_op<RsubScalarFn>(
      "rsub_scalar", "other - x, elementwise, for a number other",
      [](const BackwardContext& ctx) { return Grads{neg(ctx.grad_out)}; },
      [] { return scalar_cases(1.0); }));
  registry.add(scalar_op<DivScalarFn>(
      "div_scalar", "x / other, elementwise, for a number other",
      [](const BackwardContext& ctx) {
        return Grads{div(ctx.grad_out, ctx.attrs_as<ScalarAttrs>().value)};
      },
      div_scalar_cases));
}

}  // namespace

void register_unary(OpRegistry& registry) {
  registry.add(unary_op<NegFn>(
      "neg", "-x, elementwise", {},
      [](const BackwardContext& ctx) { return Grads{neg(ctx.grad_out)}; }, neg_cases));

  OpDef scale_def = unary_op<ScaleFn>(
      "scale", "factor * x, elementwise, for a number factor", {},
      [](const BackwardContext& ctx) {
        return Grads{scale(ctx.grad_out, ctx.attrs_as<ScaleAttrs>().factor)};
      },
      scale_cases);
  scale_def.infer = scale_infer;
  scale_def.describe_attrs = [](const std::any& attrs) {
    return fmt::format("factor={}", attrs_as<ScaleAttrs>("scale", attrs).factor);
  };
  scale_def.error_cases = scale_error_cases;
  registry.add(std::move(scale_def));

  // d exp(x) = exp(x) dx: the result, no second exp.
  registry.add(unary_op<ExpFn>(
      "exp", "e^x, elementwise", {"result"},
      [](const BackwardContext& ctx) { return Grads{mul(ctx.grad_out, ctx.result())}; },
      exp_cases));
  registry.add(unary_op<LogFn>(
      "log", "the natural logarithm of x, elementwise", {"x"},
      [](const BackwardContext& ctx) { return Grads{div(ctx.grad_out, ctx.input(0))}; },
      log_cases));
  register_activations(registry);
  register_powers(registry);
  register_scalar_arithmetic(registry);
}

}  // namespace mg
