#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct MomentumUpdateAttrs {
  double momentum = 0.9;      // >= 0
  double dampening = 0.0;     // in [0, 1]
  double weight_decay = 0.0;  // >= 0
  bool first_step = false;    // the buffer's first step: out = d, buf is not read
};

// SGD's momentum buffer, as torch.optim.SGD updates it, elementwise:
//   d = grad + weight_decay * param   (d = grad when weight_decay is 0)
//   out = first_step ? d : buf * momentum + (1 - dampening) * d
// buf, grad, param of one shape and float dtype. Not differentiable. The optimizer writes it
// over buf, before sgd_update changes param: apply_op_into(op, {buf, grad, param}, buf, attrs).
Tensor momentum_update(const Tensor& buf, const Tensor& grad, const Tensor& param,
                       const MomentumUpdateAttrs& attrs);

}  // namespace mg
