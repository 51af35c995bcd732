#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// Reductions along one axis of x [..., N, ...] (N the size of axis `dim`; a negative dim counts
// from the end; a scalar takes 0 and -1 and is its own one-element row), as PyTorch's
// torch.max(x, dim) / torch.argmax(x, dim): the output drops axis dim, or keeps it as size 1
// when keepdim is true. max and min give the extreme values in x's float dtype; argmax and
// argmin give their indices along dim as i64. The first index of the extremum wins a tie; a
// NaN in a row is its extremum (the value NaN, the index of the row's first NaN), as PyTorch
// propagates NaN. An axis of size 0 is an mg::Error: it has no extremum.
// max and min pass their gradient to the selected element of each row (0 elsewhere), as
// PyTorch's; argmax and argmin are not differentiable (their result never requires grad).
struct MaxAttrs {
  std::int64_t dim = -1;
  bool keepdim = false;
};
Tensor max(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor min(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor argmax(const Tensor& x, std::int64_t dim, bool keepdim = false);
Tensor argmin(const Tensor& x, std::int64_t dim, bool keepdim = false);

// The gradient of max and min (PyTorch's value_selecting_reduction_backward): a tensor of
// x_shape that holds grad_out at each row's index along dim (indices: integer, grad_out's
// shape, each in [0, N)) and 0 elsewhere. grad_out and indices are shaped as the forward's
// output for the same dim and keepdim. An index outside [0, N) is an mg::Error on every
// device. Not differentiable itself.
struct MaxBackwardAttrs {
  std::int64_t dim = -1;
  bool keepdim = false;
  Shape x_shape;
};
Tensor max_backward(const Tensor& grad_out, const Tensor& indices, std::int64_t dim, bool keepdim,
                    const Shape& x_shape);

}  // namespace mg
