#pragma once

#include "minigraph/tensor.h"

namespace mg {

// a / b with NumPy broadcasting (a [B, T, D] divided by b [T, D] gives [B, T, D]).
Tensor div(const Tensor& a, const Tensor& b);

}  // namespace mg
