// The elementwise unary family's functors and its engine's kernels. A functor is the one
// definition of an op's function: the CPU engine (unary_cpu.cpp), the CUDA one (unary_cuda.cu)
// and the naive reference (unary.cpp) all run it, in the element type T. A functor with
// attributes builds itself from them (`static Fn from(const std::any& attrs)`, converting its
// numbers to T once); others are default-constructed. A new op: its functor here, its name in
// MG_UNARY_FUNCTORS (each engine instantiates its kernel for every functor listed), and its row
// in unary.cpp.
//   N elements; x [..X] -> out [..X]
#pragma once

#include <cmath>

#include "common/fast_math.h"
#include "common/host_device.h"
#include "minigraph/op.h"
#include "unary/unary.h"

namespace mg {

template <typename T>
struct NegFn {
  MG_HOST_DEVICE T operator()(T x) const { return -x; }
};

template <typename T>
struct ScaleFn {
  T factor;
  static ScaleFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScaleAttrs>("scale", attrs).factor)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return factor * x; }
};

// std::exp and std::log: <cmath> on the host; on the device nvcc maps them to CUDA's expf / exp
// and logf / log. Qualified: unqualified exp in namespace mg would find mg::exp (a Tensor op).
template <typename T>
struct ExpFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::exp(x); }
};

template <typename T>
struct LogFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::log(x); }
};

// NaN stays NaN (NaN <= 0 is false), as torch.relu; -0.0 gives +0.0.
template <typename T>
struct ReluFn {
  MG_HOST_DEVICE T operator()(T x) const { return x <= T(0) ? T(0) : x; }
};

template <typename T>
struct TanhFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::tanh(x); }
};

// 1 / (1 + e^-x): e^-x overflows to inf below x = -88.7 (f32), giving exactly 0, never NaN.
template <typename T>
struct SigmoidFn {
  MG_HOST_DEVICE T operator()(T x) const { return T(1) / (T(1) + exp_vectorizable(-x)); }
};

template <typename T>
struct SqrtFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::sqrt(x); }
};

template <typename T>
struct RsqrtFn {
  MG_HOST_DEVICE T operator()(T x) const { return T(1) / std::sqrt(x); }
};

template <typename T>
struct SquareFn {
  MG_HOST_DEVICE T operator()(T x) const { return x * x; }
};

template <typename T>
struct PowFn {
  T exponent;
  static PowFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScalarAttrs>("pow", attrs).value)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return std::pow(x, exponent); }
};

// x + value, value - x and x / value (a true division, on every device, as PyTorch's CPU).
template <typename T>
struct AddScalarFn {
  T value;
  static AddScalarFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScalarAttrs>("add_scalar", attrs).value)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return x + value; }
};
template <typename T>
struct RsubScalarFn {
  T value;
  static RsubScalarFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScalarAttrs>("rsub_scalar", attrs).value)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return value - x; }
};
template <typename T>
struct DivScalarFn {
  T value;
  static DivScalarFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScalarAttrs>("div_scalar", attrs).value)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return x / value; }
};

// GELU, PyTorch's two forms and constants (aten/src/ATen/native/cpu/Activation.cpp):
// exact x * Phi(x) = x / 2 * (1 + erf(x / sqrt 2)), and GPT-2's tanh approximation
// x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))). -inf gives NaN in both (-inf * 0),
// as PyTorch's.
inline constexpr double kGeluTanhBeta = 0.7978845608028654;  // sqrt(2 / pi)
inline constexpr double kGeluTanhKappa = 0.044715;
inline constexpr double kSqrtHalf = 0.7071067811865476;      // 1 / sqrt(2)
inline constexpr double kGeluPdfScale = 0.3989422804014327;  // 1 / sqrt(2 pi)
template <typename T>
struct GeluFn {
  MG_HOST_DEVICE T operator()(T x) const {
    return x * T(0.5) * (T(1) + std::erf(x * T(kSqrtHalf)));
  }
};
// -2u = x (-2 beta - 2 beta kappa x^2), in one multiply-add and a multiply.
template <typename T>
MG_HOST_DEVICE T gelu_tanh_minus_twice_inner(T x, T x_sq) {
  return x *
         fused_multiply_add(x_sq, T(-2 * kGeluTanhBeta * kGeluTanhKappa), T(-2 * kGeluTanhBeta));
}
// 0.5 x (1 + tanh(u)) = x / (1 + e^(-2u)): one exp, which vectorises (common/fast_math.h).
template <typename T>
struct GeluTanhFn {
  MG_HOST_DEVICE T operator()(T x) const {
    return x / (T(1) + exp_vectorizable(gelu_tanh_minus_twice_inner(x, x * x)));
  }
};

#define MG_UNARY_FUNCTORS(X)                                                          \
  X(NegFn)                                                                            \
  X(ScaleFn)                                                                          \
  X(ExpFn)                                                                            \
  X(LogFn) X(ReluFn) X(TanhFn) X(SigmoidFn) X(SqrtFn) X(RsqrtFn) X(SquareFn) X(PowFn) \
      X(AddScalarFn) X(RsubScalarFn) X(DivScalarFn) X(GeluFn) X(GeluTanhFn)

// Whether gelu's `approximate` (unary.h) names the tanh form; anything but "none" and "tanh"
// is an mg::Error naming `op`.
bool gelu_is_tanh(std::string_view op, std::string_view approximate);

// The functor of Fn for element type T and the op's attributes.
template <template <typename> class Fn, typename T>
Fn<T> make_unary_fn(const std::any& attrs) {
  if constexpr (requires { Fn<T>::from(attrs); }) {
    return Fn<T>::from(attrs);
  } else {
    return Fn<T>{};
  }
}

// out[i] = Fn(x[i]); x and out may be the same memory (never partly overlapping). unary_cuda
// exists in CUDA builds only.
template <template <typename> class Fn>
void unary_cpu(const KernelContext& ctx);
template <template <typename> class Fn>
void unary_cuda(const KernelContext& ctx);

}  // namespace mg
