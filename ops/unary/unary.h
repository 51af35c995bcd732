#pragma once

#include <string_view>

#include "minigraph/tensor.h"

namespace mg {

// The elementwise unary ops: x [..X] of a float dtype (f32, f64) gives out [..X] in x's dtype.

// -x; -0.0 for 0.0, as IEEE negation.
Tensor neg(const Tensor& x);

struct ScaleAttrs {
  double factor = 1.0;
};
// factor * x, computed in x's dtype with the factor converted to it. The factor must be
// finite, and finite in that dtype (|factor| <= 3.4e38 for f32).
Tensor scale(const Tensor& x, double factor);

// e^x. Overflows to +inf past x = 88.7 in f32 and 709.8 in f64, and underflows to 0, as
// std::exp.
Tensor exp(const Tensor& x);

// The natural logarithm of x. As std::log (and PyTorch): -inf at 0, NaN below 0 (not an error).
Tensor log(const Tensor& x);

// max(x, 0); NaN stays NaN, as torch.relu.
Tensor relu(const Tensor& x);
Tensor tanh(const Tensor& x);
// 1 / (1 + e^-x): exactly 0 below x = -88.7 in f32 (-745 in f64) and 1 above 16.6 (36.7), never
// NaN for an infinite x.
Tensor sigmoid(const Tensor& x);
// As std::sqrt: NaN below 0 (not an error), and its gradient inf at 0.
Tensor sqrt(const Tensor& x);
Tensor rsqrt(const Tensor& x);   // 1 / sqrt(x): inf at 0
Tensor square(const Tensor& x);  // x * x

// A number an op applies to every element, converted to x's dtype: inf and NaN are values
// like any (x + inf); a finite value past the dtype's range (1e39 for f32) is an mg::Error,
// never a silent infinity.
struct ScalarAttrs {
  double value = 0.0;
};
// x^exponent, as std::pow (NaN for a negative x and a fractional exponent). Its gradient is
// exponent * x^(exponent - 1), and 0 for exponent 0 (as PyTorch's).
Tensor pow(const Tensor& x, double exponent);
// Tensor-scalar arithmetic, as libtorch's overloads (also the operators in tensor.h):
// x + value, x - value (= x + -value, exactly), value - x (rsub), x * value (scale) and the
// true division x / value.
Tensor add(const Tensor& x, double value);
Tensor sub(const Tensor& x, double value);
Tensor rsub(const Tensor& x, double value);
Tensor mul(const Tensor& x, double value);
Tensor div(const Tensor& x, double value);

// GELU, x * Phi(x) with Phi the standard normal CDF: approximate "none" computes it with erf,
// "tanh" with GPT-2's tanh approximation (0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))),
// as torch.nn.functional.gelu. Another string is an mg::Error. -inf gives NaN, as PyTorch's.
Tensor gelu(const Tensor& x, std::string_view approximate = "none");

// These take a tensor, so they never hide std::exp, std::tanh... on numbers (but inside namespace
// mg, call std::exp, std::sqrt... on numbers explicitly).

}  // namespace mg
