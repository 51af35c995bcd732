#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// The lower (tril) and upper (triu) triangle of each matrix of x [..., R, C] (rank >= 2), as
// PyTorch's: element (r, c) of a matrix is kept where c - r <= diagonal (tril) or
// c - r >= diagonal (triu) and is 0 elsewhere, whatever it held (a NaN or inf there becomes
// 0). diagonal 0 is the main diagonal, a positive one lies above it, a negative one below;
// any int64 is allowed (far enough out, everything is kept or everything zeroed). In x's float
// dtype. The gradient is the same triangle of the upstream gradient.
struct TriangleAttrs {
  std::int64_t diagonal = 0;
};
Tensor tril(const Tensor& x, std::int64_t diagonal = 0);
Tensor triu(const Tensor& x, std::int64_t diagonal = 0);

}  // namespace mg
