#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct MovingAverageAttrs {
  double decay = 0.9;    // in [0, 1]
  bool squared = false;  // average x * x instead of x
};

// An exponential moving average, the state of Adam's moments: out = decay * avg + (1 - decay) *
// (squared ? x * x : x), elementwise, avg and x of one shape and float dtype. Not
// differentiable. Computed in PyTorch's order (torch.optim.AdamW): without `squared`, as
// avg.lerp_(x, 1 - decay); with it, as avg.mul_(decay).addcmul_(x, x, value=1 - decay).
// Optimizers write it over avg: apply_op_into(op, {avg, x}, avg, attrs).
Tensor moving_average(const Tensor& avg, const Tensor& x, double decay, bool squared = false);

}  // namespace mg
