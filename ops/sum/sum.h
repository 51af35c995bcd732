#pragma once

#include <cstdint>
#include <vector>

#include "minigraph/tensor.h"

namespace mg {

struct SumAttrs {
  std::vector<std::int64_t> dims;  // the axes summed over (negative: from the end); empty: all
  bool keepdim = false;            // keep the summed axes, with size 1
};

// x summed over the axes `dims` (as torch.sum): x [2, 3, 4] over {0, 2} gives [3], or [1, 3, 1]
// with keepdim. With the defaults, the sum of every element as a scalar (shape []): a loss to
// call backward() on. An axis of size 0 sums to 0.
Tensor sum(const Tensor& x, const std::vector<std::int64_t>& dims = {}, bool keepdim = false);

}  // namespace mg
