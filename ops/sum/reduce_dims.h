// The shapes of a reduction over chosen axes, shared by sum and mean (their shape rules,
// kernels and backward rules; never their references, which work the shapes out themselves).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "minigraph/dtype.h"

namespace mg {

struct ReduceShapes {
  Shape keep;              // x's shape with the reduced axes as 1 (keepdim's output shape)
  Shape out;               // keep, or keep without the reduced axes when keepdim is false
  std::int64_t count = 1;  // the elements summed into each output (product of reduced sizes)
};

// Checks `dims` against x's shape (each in [-rank, rank), negative from the end, no axis twice;
// empty: every axis) and throws mg::Error naming `op` and argument 'dims' otherwise. A scalar
// x takes 0 and -1 (as PyTorch), which reduce nothing.
ReduceShapes reduce_shapes(std::string_view op, const Shape& x,
                           const std::vector<std::int64_t>& dims, bool keepdim);

// "dims={0, -1}, keepdim=true": the attributes as `minigraph ops` and graph pictures show them.
std::string describe_reduce(const std::vector<std::int64_t>& dims, bool keepdim);

}  // namespace mg
