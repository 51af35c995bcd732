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

// Comparisons with broadcasting, as torch.eq ... torch.ge: self and other of one float dtype
// give a mask of DType::boolean (IEEE: NaN compares false, but ne gives true; -0 == +0). Not
// differentiable. Against a scalar, the scalar is a 0-d tensor of self's dtype. Also as
// Tensor's methods and operators (==, !=, <, <=, >, >=).
Tensor eq(const Tensor& self, const Tensor& other);
Tensor ne(const Tensor& self, const Tensor& other);
Tensor lt(const Tensor& self, const Tensor& other);
Tensor le(const Tensor& self, const Tensor& other);
Tensor gt(const Tensor& self, const Tensor& other);
Tensor ge(const Tensor& self, const Tensor& other);
Tensor eq(const Tensor& self, double other);
Tensor ne(const Tensor& self, double other);
Tensor lt(const Tensor& self, double other);
Tensor le(const Tensor& self, double other);
Tensor gt(const Tensor& self, double other);
Tensor ge(const Tensor& self, double other);

// The gradients of unary ops, each one pass over (grad_out, what the derivative reads), as
// PyTorch's *_backward ops; grad_out and the second input broadcast as above. Not
// differentiable themselves.
Tensor relu_backward(const Tensor& grad_out, const Tensor& result);     // grad_out * (result > 0)
Tensor tanh_backward(const Tensor& grad_out, const Tensor& result);     // grad_out * (1 - result^2)
Tensor sigmoid_backward(const Tensor& grad_out, const Tensor& result);  // grad_out * (1 - r) * r
// grad_out * gelu'(x), for gelu(x, approximate) (unary.h): "none" or "tanh".
Tensor gelu_backward(const Tensor& grad_out, const Tensor& x, std::string_view approximate);

}  // namespace mg
