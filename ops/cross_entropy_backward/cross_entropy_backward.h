#pragma once

#include "minigraph/ops/cross_entropy/cross_entropy.h"
#include "minigraph/tensor.h"

namespace mg {

// The logits gradient of cross_entropy, recomputing the softmax from the logits:
//   dlogits_i = g_i · (softmax(logits_i) - onehot(targets_i)), zero for ignored rows, with
//   g_i = grad_out / (rows not ignored) for mean, grad_out for sum ([] both), grad_out[i] for
//   none (targets' shape).
//   logits [..., V], targets [...], grad_out [] or [...] -> [..., V]
// Targets are checked as cross_entropy checks them.
Tensor cross_entropy_backward(const Tensor& logits, const Tensor& targets, const Tensor& grad_out,
                              CrossEntropyOptions options = {});

}  // namespace mg
