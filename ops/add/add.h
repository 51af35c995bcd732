#pragma once

#include "minigraph/tensor.h"

namespace mg {

// a + b with NumPy broadcasting (a [T, D] plus b [B, T, D] gives [B, T, D]).
Tensor add(const Tensor& a, const Tensor& b);

}  // namespace mg
