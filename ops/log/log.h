#pragma once

#include "minigraph/tensor.h"

namespace mg {

// The natural logarithm of x, elementwise, in x's dtype (f32, f64). As std::log (and PyTorch):
// -inf at 0, NaN below 0 (not an error). Takes a tensor, so it never hides std::log on
// numbers (but inside namespace mg, call std::log on numbers explicitly).
Tensor log(const Tensor& x);

}  // namespace mg
