#pragma once

#include "minigraph/tensor.h"

namespace mg {

// Transpose flags take the place of materialised transposes (as BLAS's).
struct MatmulOptions {
  bool transpose_a = false;  // a holds [..., K, M]
  bool transpose_b = false;  // b holds [K, N] as [N, K] (or [..., N, K])
};

// op(a) [..., M, K] times op(b) [K, N] (shared by every batch) or [..., K, N] (one per batch,
// the same batch axes as a) gives [..., M, N].
Tensor matmul(const Tensor& a, const Tensor& b, MatmulOptions options = {});

}  // namespace mg
