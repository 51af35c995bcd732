#pragma once

#include "minigraph/tensor.h"

namespace mg {

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
// with buf the momentum buffer already updated for this step (momentum_update). param, grad,
// buf of one shape and float dtype; without momentum buf is not read (pass grad). Not
// differentiable. The optimizer writes it over param: apply_op_into(op, {param, grad, buf},
// param, attrs).
Tensor sgd_update(const Tensor& param, const Tensor& grad, const Tensor& buf,
                  const SgdUpdateAttrs& attrs);

}  // namespace mg
