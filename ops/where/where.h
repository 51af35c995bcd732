#pragma once

#include "minigraph/tensor.h"

namespace mg {

// Elementwise selection with NumPy broadcasting, as torch.where: out[i] = condition[i] ?
// self[i] : other[i], where condition is a bool mask (DType::boolean, from a comparison) and
// self and other share one float dtype; out has the broadcast of all three shapes. The
// gradient of self is grad_out where the condition holds and 0 elsewhere (other's the
// reverse), each summed back to its input's shape. A NaN in the side not taken does not
// reach the output (nor its gradient).
Tensor where(const Tensor& condition, const Tensor& self, const Tensor& other);

// self with value written wherever mask is true (as torch.masked_fill): where(mask, value,
// self); mask broadcasts to self's shape. The causal mask of attention is
// scores.masked_fill(future, -inf); its gradient is grad_out where mask is false, else 0.
Tensor masked_fill(const Tensor& self, const Tensor& mask, double value);

}  // namespace mg
