#pragma once

#include "minigraph/tensor.h"

namespace mg {

// a - b with NumPy broadcasting (a [B, T, D] minus b [T, D] gives [B, T, D]).
Tensor sub(const Tensor& a, const Tensor& b);

}  // namespace mg
