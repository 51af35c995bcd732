// The elementwise binary family's functors and its engine's kernels. A functor is the one
// definition of an op's function: the CPU engine (binary_cpu.cpp), the CUDA one
// (binary_cuda.cu) and the naive reference (binary.cpp) all run it. A new op: its functor
// here, its name in MG_BINARY_FUNCTORS (each engine instantiates its kernel for every functor
// listed), and its row in binary.cpp.
//   a [..A], b [..B] -> out [broadcast(A, B)]
#pragma once

#include <cmath>
#include <type_traits>

#include "common/host_device.h"
#include "minigraph/op.h"
#include "unary/unary_kernels.h"  // the GELU constants

namespace mg {

struct AddFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x + y;
  }
};
struct SubFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x - y;
  }
};
struct MulFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x * y;
  }
};
struct DivFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x / y;
  }
};

// The derivatives of unary ops that read the input or result once (PyTorch's *_backward ops):
// (grad_out, x or result) -> grad_in, one pass instead of a chain of elementwise ops.
// relu: grad_out where result > 0 (NaN passes it through, as threshold_backward), else 0.
struct ReluBackwardFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T g, T result) const {
    return result <= T(0) ? T(0) : g;
  }
};
// tanh: g * (1 - y^2); sigmoid: g * (1 - y) * y.
struct TanhBackwardFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T g, T y) const {
    return g * (T(1) - y * y);
  }
};
struct SigmoidBackwardFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T g, T y) const {
    return g * (T(1) - y) * y;
  }
};
// GELU: g * (Phi(x) + x phi(x)), as PyTorch's GeluBackward.
struct GeluBackwardFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T g, T x) const {
    const T cdf = T(0.5) * (T(1) + std::erf(x * T(kSqrtHalf)));
    const T pdf = T(kGeluPdfScale) * std::exp(T(-0.5) * x * x);
    return g * (cdf + x * pdf);
  }
};
// The tanh form's: with u = beta (x + kappa x^3) and s = (1 + tanh u) / 2 = 1 / (1 + e^-2u),
// d/dx = s + x s (1 - s) beta (2 + 6 kappa x^2). Where s is near 1 (e^-2u < 1), 1 - s is taken
// as e^-2u s, which keeps the digits the subtraction would cancel.
struct GeluTanhBackwardFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T g, T x) const {
    const T x_sq = x * x;
    const T e = exp_vectorizable(gelu_tanh_minus_twice_inner(x, x_sq));
    const T s = T(1) / (T(1) + e);
    const T inner_derivative =
        fused_multiply_add(x_sq, T(6 * kGeluTanhBeta * kGeluTanhKappa), T(2 * kGeluTanhBeta));
    const T one_minus_s = e < T(1) ? e * s : T(1) - s;
    return g * (s * fused_multiply_add(x * one_minus_s, inner_derivative, T(1)));
  }
};

// The comparisons: a bool per element (DType::boolean), false wherever a NaN takes part
// except for ne, as IEEE and PyTorch; -0 equals +0.
struct EqFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x == y;
  }
};
struct NeFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x != y;
  }
};
struct LtFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x < y;
  }
};
struct LeFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x <= y;
  }
};
struct GtFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x > y;
  }
};
struct GeFn {
  template <typename T>
  MG_HOST_DEVICE bool operator()(T x, T y) const {
    return x >= y;
  }
};

// What fn gives for operands of type T: T for arithmetic, bool for a comparison.
template <typename Fn, typename T>
using BinaryResult = decltype(Fn{}(T{}, T{}));
template <typename Fn>
inline constexpr bool kIsComparison = std::is_same_v<BinaryResult<Fn, double>, bool>;

#define MG_BINARY_FUNCTORS(X)                                                                    \
  X(AddFn)                                                                                       \
  X(SubFn)                                                                                       \
  X(MulFn)                                                                                       \
  X(DivFn)                                                                                       \
  X(ReluBackwardFn)                                                                              \
  X(TanhBackwardFn) X(SigmoidBackwardFn) X(GeluBackwardFn) X(GeluTanhBackwardFn) X(EqFn) X(NeFn) \
      X(LtFn) X(LeFn) X(GtFn) X(GeFn)

// fn with its operands exchanged: the fast paths pass the full-size operand first, so when
// that operand is b they run Flipped{fn}, keeping a - b and a / b in the user's order.
template <typename Fn>
struct Flipped {
  Fn fn;
  template <typename T>
  MG_HOST_DEVICE auto operator()(T x, T y) const {
    return fn(y, x);
  }
};

// out = Fn(a, b). out may be a or b itself (each element is read before the same index is
// written). binary_cuda exists in CUDA builds only.
template <typename Fn>
void binary_cpu(const KernelContext& ctx);
template <typename Fn>
void binary_cuda(const KernelContext& ctx);

}  // namespace mg
