#pragma once

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

// exp and log take a tensor, so they never hide std::exp and std::log on numbers (but inside
// namespace mg, call std::exp and std::log on numbers explicitly).

}  // namespace mg
