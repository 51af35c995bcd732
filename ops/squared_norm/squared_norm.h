#pragma once

#include "minigraph/tensor.h"

namespace mg {

// The sum of squares of every element of x, a scalar [] in x's float dtype: the squared L2
// norm, for global gradient-norm clipping (optim/clip.h). Accumulated in double for f32 too,
// and deterministic: the same bits for any thread count (CPU) and on every run (CUDA, no
// atomics). Not differentiable.
Tensor squared_norm(const Tensor& x);

}  // namespace mg
