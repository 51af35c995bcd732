#pragma once

#include <cstdint>

#include "minigraph/ops/loss_reduction.h"
#include "minigraph/tensor.h"

namespace mg {

struct CrossEntropyOptions {
  Reduction reduction = Reduction::mean;
  // Rows whose target equals it add nothing to the loss and are not counted by the mean (their
  // loss is 0 with reduction none); PyTorch's default.
  std::int64_t ignore_index = kDefaultIgnoreIndex;
};

// The cross-entropy of softmax(logits) against integer targets, from a numerically stable
// log-softmax: loss_i = logsumexp(logits_i) - logits_i[targets_i].
//   logits [..., V] (f32, f64), targets [...] (i32, i64, each in [0, V) or ignore_index)
//   -> [] (mean, sum) or [...] (none)
// A mean over no counted row is NaN, as in PyTorch. A target outside [0, V) that is not
// ignore_index is an mg::Error naming its value and position, on every device.
Tensor cross_entropy(const Tensor& logits, const Tensor& targets, CrossEntropyOptions options = {});

}  // namespace mg
