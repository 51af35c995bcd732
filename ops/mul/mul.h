#pragma once

#include "minigraph/tensor.h"

namespace mg {

// a * b with NumPy broadcasting (a [B, T, D] times b [T, D] gives [B, T, D]).
Tensor mul(const Tensor& a, const Tensor& b);

}  // namespace mg
