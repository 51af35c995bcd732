#pragma once

#include <string_view>

#include "minigraph/tensor.h"

namespace mg {

// The elementwise binary ops, with NumPy broadcasting: a [..A] and b [..B] of one float dtype
// give out [broadcast(A, B)] (a [T, D] plus b [B, T, D] gives [B, T, D]).
Tensor add(const Tensor& a, const Tensor& b);  // a + b
Tensor sub(const Tensor& a, const Tensor& b);  // a - b
Tensor mul(const Tensor& a, const Tensor& b);  // a * b
Tensor div(const Tensor& a, const Tensor& b);  // a / b (IEEE: x / 0 is inf or NaN, no error)

// The gradients of unary ops, each one pass over (grad_out, what the derivative reads), as
// PyTorch's *_backward ops; grad_out and the second input broadcast as above. Not
// differentiable themselves.
Tensor relu_backward(const Tensor& grad_out, const Tensor& result);     // grad_out * (result > 0)
Tensor tanh_backward(const Tensor& grad_out, const Tensor& result);     // grad_out * (1 - result^2)
Tensor sigmoid_backward(const Tensor& grad_out, const Tensor& result);  // grad_out * (1 - r) * r
// grad_out * gelu'(x), for gelu(x, approximate) (unary.h): "none" or "tanh".
Tensor gelu_backward(const Tensor& grad_out, const Tensor& x, std::string_view approximate);

}  // namespace mg
