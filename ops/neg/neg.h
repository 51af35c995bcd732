#pragma once

#include "minigraph/tensor.h"

namespace mg {

// -x, elementwise, in x's dtype (f32, f64); -0.0 for 0.0, as IEEE negation.
Tensor neg(const Tensor& x);

}  // namespace mg
