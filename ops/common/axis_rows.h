// The rows of a tensor along one axis, as the kernels that reduce or normalise along it walk
// them (softmax, max): x [..., N, ...] along `dim` is R = outer * inner rows of N elements,
// row r = (o, i) starting at o * N * inner + i with a stride of inner between its elements (1,
// and contiguous rows, when dim is the last axis).
#pragma once

#include <cstdint>
#include <string_view>

#include "common/host_device.h"
#include "minigraph/dtype.h"

namespace mg {

struct AxisRows {
  std::int64_t outer = 1, n = 1, inner = 1;
  MG_HOST_DEVICE std::int64_t count() const { return outer * inner; }
  MG_HOST_DEVICE std::int64_t start(std::int64_t row) const {
    return row / inner * n * inner + row % inner;
  }
};

// The rows of a tensor of `shape` along `dim` (negative counts from the end; out of range is
// `op`'s mg::Error; a scalar is one row of one).
AxisRows axis_rows(const Shape& shape, std::int64_t dim, std::string_view op);

}  // namespace mg
