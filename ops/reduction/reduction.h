#pragma once

#include <cstdint>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

// The reductions over chosen axes: x [..X] of a float dtype reduced over `dims`.
struct ReduceAttrs {
  std::vector<std::int64_t> dims;  // the axes reduced over (negative: from the end); empty: all
  bool keepdim = false;            // keep the reduced axes, with size 1
};
using SumAttrs = ReduceAttrs;
using MeanAttrs = ReduceAttrs;

// x summed over the axes `dims` (as torch.sum): x [2, 3, 4] over {0, 2} gives [3], or [1, 3, 1]
// with keepdim. With the defaults, the sum of every element as a scalar (shape []): a loss to
// call backward() on. An axis of size 0 sums to 0.
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);

// x averaged over the axes `dims` (as torch.mean): sum(x, dims, keepdim) divided by the number
// of elements summed into each output. A mean over no elements (an axis of size 0) is NaN, as
// in PyTorch.
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);

}  // namespace mg
