// scaled_gelu and scaled_gelu_backward on the CPU, each with its naive reference.
//   N elements; x [N] (any shape, contiguous), grad [N] -> out [N]
// The kernels compute Phi(x) = erfc(-x / sqrt 2) / 2, which keeps its precision for very
// negative x; the references use the textbook (1 + erf(x / sqrt 2)) / 2 in double, so the
// harness compares two different formulas.
#include <cmath>
#include <numbers>

#include "scaled_gelu/scaled_gelu.h"

namespace mg {

namespace {

constexpr double kInvSqrt2 = 1.0 / std::numbers::sqrt2;
constexpr double kInvSqrt2Pi = std::numbers::inv_sqrtpi / std::numbers::sqrt2;  // 1 / sqrt(2 pi)

template <typename T>
T normal_cdf(T x) {
  return T(0.5) * std::erfc(-x * T(kInvSqrt2));
}

template <typename T>
T normal_pdf(T x) {
  return T(kInvSqrt2Pi) * std::exp(T(-0.5) * x * x);
}

double scale_of(const KernelContext& ctx) { return ctx.attrs_as<ScaledGeluAttrs>().scale; }

}  // namespace

void scaled_gelu_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* x = ctx.inputs[0].data<T>();
    T* out = ctx.out.data<T>();
    const T scale = static_cast<T>(scale_of(ctx));
    for (std::int64_t i = 0, n = ctx.out.numel(); i < n; ++i)
      out[i] = scale * x[i] * normal_cdf(x[i]);
  });
}

void scaled_gelu_backward_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const T* grad = ctx.inputs[0].data<T>();
    const T* x = ctx.inputs[1].data<T>();
    T* out = ctx.out.data<T>();
    const T scale = static_cast<T>(scale_of(ctx));
    for (std::int64_t i = 0, n = ctx.out.numel(); i < n; ++i) {
      out[i] = grad[i] * scale * (normal_cdf(x[i]) + x[i] * normal_pdf(x[i]));
    }
  });
}

// The references make their own output (x's shape: the op is elementwise) and fill it one
// element at a time, in double.
Tensor scaled_gelu_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const double scale = attrs_as<ScaledGeluAttrs>("scaled_gelu", attrs).scale;
  Tensor out = Tensor::empty(x.shape(), x.dtype());  // its own shape: elementwise
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.at_flat(i);
    out.set_flat(i, scale * 0.5 * v * (1.0 + std::erf(v / std::sqrt(2.0))));
  }
  return out;
}

Tensor scaled_gelu_backward_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& grad = inputs[0];
  const Tensor& x = inputs[1];
  const double scale = attrs_as<ScaledGeluAttrs>("scaled_gelu", attrs).scale;
  Tensor out = Tensor::empty(grad.shape(), grad.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    const double v = x.at_flat(i);
    const double cdf = 0.5 * (1.0 + std::erf(v / std::sqrt(2.0)));
    const double pdf = std::exp(-0.5 * v * v) / std::sqrt(2.0 * std::numbers::pi);
    out.set_flat(i, grad.at_flat(i) * scale * (cdf + v * pdf));
  }
  return out;
}

}  // namespace mg
