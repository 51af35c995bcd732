#pragma once

#include <cstdint>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct MeanAttrs {
  std::vector<std::int64_t> dims;  // the axes averaged over (negative: from the end); empty: all
  bool keepdim = false;            // keep the averaged axes, with size 1
};

// x averaged over the axes `dims` (as torch.mean): sum(x, dims, keepdim) divided by the number
// of elements summed into each output. With the defaults, the mean of every element as a
// scalar (shape []). A mean over no elements (an axis of size 0) is NaN, as in PyTorch.
Tensor mean(const Tensor& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);

}  // namespace mg
