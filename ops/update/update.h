#pragma once

#include "minigraph/tensor.h"

namespace mg {

// The optimizer update ops: elementwise over inputs of one shape and float dtype, not
// differentiable (optimizer steps are never recorded). Optimizers write each over its first
// input with apply_op_into (optim/adamw.h, optim/sgd.h). The numbers are converted to the
// element type first, as PyTorch converts its Python scalars to the tensor's dtype.

struct MovingAverageAttrs {
  double decay = 0.9;    // in [0, 1]
  bool squared = false;  // average x * x instead of x
};

// An exponential moving average, the state of Adam's moments: out = decay * avg + (1 - decay) *
// (squared ? x * x : x), elementwise. Computed in PyTorch's order (torch.optim.AdamW): without
// `squared`, as avg.lerp_(x, 1 - decay); with it, as avg.mul_(decay).addcmul_(x, x, value=1 -
// decay). Optimizers write it over avg: apply_op_into(op, {avg, x}, avg, attrs).
Tensor moving_average(const Tensor& avg, const Tensor& x, double decay, bool squared = false);

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
// / denom, so f32 results match PyTorch's closely.
// Optimizers write it over param: apply_op_into(op, {param, m, v}, param, attrs).
Tensor adamw_update(const Tensor& param, const Tensor& m, const Tensor& v,
                    const AdamWUpdateAttrs& attrs);

struct MomentumUpdateAttrs {
  double momentum = 0.9;      // >= 0
  double dampening = 0.0;     // in [0, 1]
  double weight_decay = 0.0;  // >= 0
  bool first_step = false;    // the buffer's first step: out = d, buf is not read
};

// SGD's momentum buffer, as torch.optim.SGD updates it, elementwise:
//   d = grad + weight_decay * param   (d = grad when weight_decay is 0)
//   out = first_step ? d : buf * momentum + (1 - dampening) * d
// The optimizer writes it over buf, before sgd_update changes param: apply_op_into(op, {buf, grad,
// param}, buf, attrs).
Tensor momentum_update(const Tensor& buf, const Tensor& grad, const Tensor& param,
                       const MomentumUpdateAttrs& attrs);

struct SgdUpdateAttrs {
  double lr = 1e-3;           // >= 0
  double weight_decay = 0.0;  // >= 0
  double momentum = 0.0;      // >= 0; 0: buf is not read
  bool nesterov = false;      // needs momentum > 0
};

// SGD's parameter step, as torch.optim.SGD, elementwise:
//   d = grad + weight_decay * param   (d = grad when weight_decay is 0)
//   d = momentum == 0 ? d : nesterov ? d + momentum * buf : buf
//   out = param - lr * d
// with buf the momentum buffer already updated for this step (momentum_update); without
// momentum buf is not read (pass grad). The optimizer writes it over param:
// apply_op_into(op, {param, grad, buf}, param, attrs).
Tensor sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                  const SgdUpdateAttrs& attrs);

}  // namespace mg
