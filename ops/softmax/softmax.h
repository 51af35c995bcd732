#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// softmax and log_softmax along one axis of x [..., N, ...] (N the size of axis `dim`; a
// negative dim counts from the end, as PyTorch's), in x's float dtype:
//   softmax(x)_i = exp(x_i - max) / sum_j exp(x_j - max), log_softmax(x)_i = x_i - max - log(sum)
// Subtracting the row's max keeps every exp <= 1: logits of any magnitude neither overflow nor
// lose the sum. A row whose every element is -inf (fully masked) gives zeros from softmax,
// never NaN, and -inf from log_softmax (the log of those zeros; its gradient is grad_out, as
// for any -inf element). A NaN, or +inf, in a row makes that row NaN, as in PyTorch.
struct SoftmaxAttrs {
  std::int64_t dim = -1;
};
Tensor softmax(const Tensor& x, std::int64_t dim);
Tensor log_softmax(const Tensor& x, std::int64_t dim);

// Their gradients from the result y (PyTorch's _softmax_backward_data and
// _log_softmax_backward_data): y * (g - sum(g * y)) and g - exp(y) * sum(g) along dim. Not
// differentiable themselves.
Tensor softmax_backward(const Tensor& grad_out, const Tensor& result, std::int64_t dim);
Tensor log_softmax_backward(const Tensor& grad_out, const Tensor& result, std::int64_t dim);

}  // namespace mg
