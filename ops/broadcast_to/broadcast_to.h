#pragma once

#include "minigraph/tensor.h"

namespace mg {

struct BroadcastToAttrs {
  Shape shape;  // the target shape
};

// x repeated to `shape` (NumPy broadcasting: x's shape must broadcast to it): the gradient of
// every reduction. Returns x itself when the shapes are equal.
Tensor broadcast_to(const Tensor& x, const Shape& shape);

}  // namespace mg
