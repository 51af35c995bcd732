#pragma once

#include "minigraph/tensor.h"

namespace mg {

// The elementwise binary ops, with NumPy broadcasting: a [..A] and b [..B] of one float dtype
// give out [broadcast(A, B)] (a [T, D] plus b [B, T, D] gives [B, T, D]).
Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b (IEEE: x / 0 is inf or NaN, no error)

}  // namespace mg
