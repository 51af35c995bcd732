#pragma once

#include "minigraph/tensor.h"

namespace mg {

// x's size-1 axes repeated to `shape` without a copy (stride 0), as torch.expand: x's shape,
// aligned to the right, must broadcast to `shape`; -1 keeps x's size on an aligned axis; new
// axes may lead. Recorded by autograd: the gradient is the upstream one summed back to x's
// shape (sum_to, one reduction). Nothing may write through the result (its elements overlap).
Tensor expand(const Tensor& x, const Shape& shape);

}  // namespace mg
