#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct ScaleAttrs {
  double factor = 1.0;
};

// factor * x, elementwise, computed in x's dtype (f32, f64) with the factor converted to it.
// The factor must be finite, and finite in that dtype (|factor| <= 3.4e38 for f32).
Tensor scale(const Tensor& x, double factor);

}  // namespace mg
