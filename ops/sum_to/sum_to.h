#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct SumToAttrs {
  Shape shape;  // the target shape
};

// Sums x down to `shape`, which must broadcast to x's shape: the reduction behind the
// backward of every broadcasting op. Returns x itself when the shapes are equal.
Tensor sum_to(const Tensor& x, const Shape& shape);

}  // namespace mg
