#pragma once

#include "minigraph/tensor.h"

namespace mg {

// Layer normalisation over the trailing axes S = normalized_shape of x [..., *S], as PyTorch's
// layer_norm: each of the N rows (the leading axes) of D = prod(S) elements becomes
//   y = (x - mean) * rstd * weight + bias,  rstd = 1 / sqrt(var + eps),
// with the biased variance (divided by D) and eps inside the square root. weight and bias are
// [*S]; everything in x's float dtype, the row statistics summed in double. A NaN or inf in a
// row makes that row NaN. eps must be finite and >= 0.
struct LayerNormAttrs {
  Shape normalized_shape;
  double eps = 1e-5;
};
Tensor layer_norm(const Tensor& x, const Shape& normalized_shape, const Tensor& weight,
                  const Tensor& bias, double eps = 1e-5);

// The fused backward: from grad_out [..., *S], x, weight and the forward's row statistics mean
// and rstd ([...], x's leading axes), the three gradients in one pass over the rows:
//   dx = rstd * (dxhat - mean(dxhat) - xhat * mean(dxhat * xhat)),  dxhat = grad_out * weight,
//   dweight = sum over rows of grad_out * xhat,  dbias = sum over rows of grad_out.
// The op (layer_norm_backward) writes them into one flat tensor [N * D + 2 * D]; this returns
// views of it. Not differentiable itself.
struct LayerNormGrads {
  Tensor x, weight, bias;
};
LayerNormGrads layer_norm_backward(const Tensor& grad_out, const Tensor& x, const Tensor& weight,
                                   const Tensor& mean, const Tensor& rstd,
                                   const Shape& normalized_shape);

}  // namespace mg
