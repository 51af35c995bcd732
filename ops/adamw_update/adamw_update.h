#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct AdamWUpdateAttrs {
  double lr = 1e-3;               // >= 0
  double beta1_correction = 1.0;  // 1 - beta1^t, in (0, 1]
  double beta2_correction = 1.0;  // 1 - beta2^t, in (0, 1]
  double eps = 1e-8;              // >= 0
  double weight_decay = 0.01;     // >= 0
};

// AdamW's parameter update from its moments m and v (moving_average), elementwise:
//   out = param * (1 - lr * wd) - lr * (m / c1) / (sqrt(v / c2) + eps)
// with c1, c2 the bias corrections. Computed in torch.optim.AdamW's order (single-tensor
// path): p = param * (1 - lr * wd); denom = sqrt(v) / sqrt(c2) + eps; out = p + (-lr / c1) * m
// / denom, the numbers converted to the element type, so f32 results match PyTorch's closely.
// param, m, v of one shape and float dtype. Not differentiable. Optimizers write it over
// param: apply_op_into(op, {param, m, v}, param, attrs).
Tensor adamw_update(const Tensor& param, const Tensor& m, const Tensor& v,
                    const AdamWUpdateAttrs& attrs);

}  // namespace mg
