#pragma once

#include "minigraph/tensor.h"

namespace mg {

// e^x, elementwise, in x's dtype (f32, f64). Overflows to +inf past x = 88.7 in f32 and
// 709.8 in f64, and underflows to 0, as std::exp. Takes a tensor, so it never hides
// std::exp on numbers (but inside namespace mg, call std::exp on numbers explicitly).
Tensor exp(const Tensor& x);

}  // namespace mg
