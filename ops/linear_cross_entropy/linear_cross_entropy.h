#pragma once

#include <cstdint>

#include "minigraph/ops/loss_reduction.h"
#include "minigraph/tensor.h"

namespace mg {

struct LinearCrossEntropyOptions {
  Reduction reduction = Reduction::mean;  // mean or sum (none: use matmul + cross_entropy)
  std::int64_t ignore_index = kDefaultIgnoreIndex;  // as in cross_entropy
  // The memory budget of one chunk of rows: its logits and their gradient, [rows, V] each.
  // The chunk's row count follows from it (at least one row).
  std::int64_t chunk_bytes = std::int64_t{64} << 20;
};

// cross_entropy(x @ w, targets), fused and chunked: the [N, V] logits (and their gradient) are
// never materialised, only chunks of rows within options.chunk_bytes. The forward computes the
// gradients of x and w with the loss when a backward can follow, so a training step costs the
// three GEMMs of the unfused path; w's gradient accumulates in f32 or wider.
//   x [..., D], w [D, V], targets [...] (ids in [0, V) or ignore_index) -> []
Tensor linear_cross_entropy(const Tensor& x, const Tensor& w, const Tensor& targets,
                            LinearCrossEntropyOptions options = {});

}  // namespace mg
