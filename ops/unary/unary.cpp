// The elementwise unary family: neg, scale, exp and log, one row each. A row names the op, its
// functor (unary_kernels.h), its derivative and what the derivative reads, and the cases at
// the edges of its function; the family gives every row its shape rule, kernels, naive
// reference and shared cases. scale adds a check of its factor.
//   x [..X] -> out [..X]
#include "unary/unary.h"

#include <cmath>
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
std::vector<OpCase> unary_cases(InputSpec (*input)(Shape), const std::any& attrs = {}) {
  return std::vector<OpCase>{
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
}

}  // namespace mg
