// scale: out = factor * x, elementwise, with a number `factor` (an attribute, not a tensor).
//   x [..X], factor (finite) -> out [..X]
// Backward: the upstream gradient scaled by the same factor (scale).
#include "scale/scale.h"

#include <cmath>
#include <limits>

#include "common/define_op.h"
#include "common/unary.h"

namespace mg {

MG_DECLARE_KERNELS(scale);
Tensor scale_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor scale(const Tensor& x, double factor) {
  static const OpDef& op = builtin_op("scale");
  return apply_op(op, {x}, ScaleAttrs{factor});
}

namespace {

std::vector<OpCase> scale_cases() {
  using I = InputSpec;
  using A = ScaleAttrs;
  auto cases = unary_cases([](Shape shape) { return I::real(std::move(shape)); }, A{2.5});
  cases.push_back({"negative_factor", {I::real({3, 5})}, A{-0.75}});
  cases.push_back({"zero_factor", {I::real({3, 5})}, A{0.0}});
  cases.push_back({"unit_factor", {I::real({4})}, A{1.0}});
  // 0.1 is not exact in binary: f32 multiplies by float(0.1), within f32's tolerance.
  cases.push_back({"inexact_factor", {I::real({2, 16, 8})}, A{0.1}});
  return cases;
}

std::vector<ErrorCase> scale_error_cases() {
  using I = InputSpec;
  using A = ScaleAttrs;
  return std::vector<ErrorCase>{
      {"integer_input", {I::ids({2, 3}, 5)}, A{2.0}, "floating-point"},
      {"nan_factor", {I::real({3})}, A{std::nan("")}, "argument 'factor'"},
      {"infinite_factor", {I::real({3})}, A{INFINITY}, "a finite factor"},
      {"negative_infinite_factor", {I::real({3})}, A{-INFINITY}, "a finite factor"},
      {"factor_past_f32",
       {I::real({3}).with_dtype(DType::f32)},
       A{1e39},
       "finite in x's dtype f32"},
  };
}

}  // namespace

void register_scale(OpRegistry& registry) {
  OpDef op = unary_op("scale", "factor * x, elementwise, for a number factor");
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    OutputSpec out = unary_infer(self, in, attrs);
    const double factor = attrs_as<ScaleAttrs>("scale", attrs).factor;
    // The kernels compute in x's dtype: a factor past f32's range would turn into infinity.
    const double limit = out.dtype == DType::f32 ? std::numeric_limits<float>::max()
                                                 : std::numeric_limits<double>::max();
    MG_CHECK(std::abs(factor) <= limit, "scale", "factor",
             fmt::format("a finite factor (finite in x's dtype {})", dtype_name(out.dtype)), "{}",
             factor);
    return out;
  };
  op.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{scale(ctx.grad_out, ctx.attrs_as<ScaleAttrs>().factor)};
  };
  op.kernels = MG_KERNELS(scale);
  op.reference = scale_reference;
  op.describe_attrs = [](const std::any& attrs) {
    return fmt::format("factor={}", attrs_as<ScaleAttrs>("scale", attrs).factor);
  };
  op.cases = scale_cases;
  op.error_cases = scale_error_cases;
  registry.add(std::move(op));
}

}  // namespace mg
