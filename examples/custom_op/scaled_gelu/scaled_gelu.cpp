// scaled_gelu: out = scale * x * Phi(x)
//   x [...] -> out [...]   (Phi: the standard normal CDF)
// Backward: grad_x = grad * scale * (Phi(x) + x * phi(x)), its own op scaled_gelu_backward
// (there is no erf op to write it in). scaled_gelu_backward has no backward rule itself:
// minigraph does not take second derivatives.
#include "scaled_gelu/scaled_gelu.h"

#include <cmath>

namespace mg {

void scaled_gelu_cpu(const KernelContext& ctx);
Tensor scaled_gelu_reference(std::span<const Tensor> inputs, const std::any& attrs);
void scaled_gelu_backward_cpu(const KernelContext& ctx);
Tensor scaled_gelu_backward_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor scaled_gelu(const Tensor& x, double scale) {
  static const OpDef& op = OpRegistry::instance().get("scaled_gelu");
  return apply_op(op, {x}, ScaledGeluAttrs{scale});
}

Tensor scaled_gelu_backward(const Tensor& grad, const Tensor& x, double scale) {
  static const OpDef& op = OpRegistry::instance().get("scaled_gelu_backward");
  return apply_op(op, {grad, x}, ScaledGeluAttrs{scale});
}

namespace {

void check_scale(const OpDef& self, const std::any& attrs) {
  const double scale = attrs_as<ScaledGeluAttrs>("scaled_gelu", attrs).scale;
  MG_CHECK(std::isfinite(scale), self.name, "scale", "a finite scale", "{}", scale);
}

std::string describe_scale(const std::any& attrs) {
  return fmt::format("scale={}", attrs_as<ScaledGeluAttrs>("scaled_gelu", attrs).scale);
}

void register_forward(OpRegistry& registry) {
  OpDef op;
  op.name = "scaled_gelu";
  op.summary = "scale * gelu(x), exact GELU (the custom-op example)";
  op.inputs = {"x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    check_scale(self, attrs);
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  op.backward_reads = {"x"};
  op.backward = [](const BackwardContext& ctx) {
    const double scale = ctx.attrs_as<ScaledGeluAttrs>().scale;
    return std::vector<Tensor>{scaled_gelu_backward(ctx.grad_out, ctx.input(0), scale)};
  };
  op.kernels = device_kernels(scaled_gelu_cpu);
  op.reference = scaled_gelu_reference;
  op.describe_attrs = describe_scale;
  op.cases = [] {
    using I = InputSpec;
    using A = ScaledGeluAttrs;
    return std::vector<OpCase>{
        {"vector", {I::real({7})}, A{1.0}},
        {"scaled", {I::real({3, 5})}, A{1.702}},
        {"negative_scale", {I::real({2, 3, 4})}, A{-0.5}},
        {"around_zero", {I::real({6}).with_values({-3, -1, -1e-3, 0, 1e-3, 2})}, A{1.0}},
        {"size_one_dims", {I::real({1, 1})}, A{2.0}},
        {"andrea_activations", {I::real({2, 16, 8})}, A{1.0}},
    };
  };
  op.error_cases = [] {
    using I = InputSpec;
    using A = ScaledGeluAttrs;
    return std::vector<ErrorCase>{
        {"infinite_scale", {I::real({3})}, A{INFINITY}, "a finite scale"},
    };
  };
  registry.add(std::move(op));
}

void register_backward(OpRegistry& registry) {
  OpDef op;
  op.name = "scaled_gelu_backward";
  op.summary = "grad * d/dx scaled_gelu(x): the backward of scaled_gelu";
  op.inputs = {"grad", "x"};
  op.infer = [](const OpDef& self, std::span<const Tensor> in, const std::any& attrs) {
    check_floating(self, 0, in[0]);
    check_floating(self, 1, in[1]);
    check_same_dtype(self, 1, in[1], in[0].dtype());
    MG_CHECK(in[0].shape() == in[1].shape(), self.name, "x",
             fmt::format("grad's shape {}", shape_str(in[0].shape())), "{}",
             shape_str(in[1].shape()));
    check_scale(self, attrs);
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  op.kernels = device_kernels(scaled_gelu_backward_cpu);
  op.reference = scaled_gelu_backward_reference;
  op.describe_attrs = describe_scale;
  op.cases = [] {
    using I = InputSpec;
    using A = ScaledGeluAttrs;
    return std::vector<OpCase>{
        {"vector", {I::real({7}), I::real({7})}, A{1.0}},
        {"scaled", {I::real({2, 3, 4}), I::real({2, 3, 4})}, A{1.702}},
    };
  };
  op.error_cases = [] {
    using I = InputSpec;
    using A = ScaledGeluAttrs;
    return std::vector<ErrorCase>{
        {"shape_mismatch", {I::real({2, 3}), I::real({3, 2})}, A{1.0}, "grad's shape [2, 3]"},
    };
  };
  registry.add(std::move(op));
}

}  // namespace

void register_scaled_gelu(OpRegistry& registry) {
  register_forward(registry);
  register_backward(registry);
}

}  // namespace mg

extern "C" void minigraph_register_ops(mg::OpRegistry& registry) {
  mg::register_scaled_gelu(registry);
}
