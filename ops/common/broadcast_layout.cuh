// Device side of common/broadcast_layout.h: where element i of the output reads an input whose
// strides over the merged axes are `stride` (nvcc only).
#pragma once

#include <cstdint>

#include "common/broadcast_layout.h"

namespace mg::cuda {

// i unravelled by layout.size (mixed radix, the last axis fastest), dotted with stride.
__device__ inline std::int64_t layout_offset(std::int64_t i, const BroadcastLayout& layout,
                                             const std::int64_t* stride) {
  std::int64_t offset = 0;
  for (int axis = layout.rank - 1; axis > 0; --axis) {
    const std::int64_t outer = i / layout.size[axis];
    offset += (i - outer * layout.size[axis]) * stride[axis];
    i = outer;
  }
  return offset + i * stride[0];
}

}  // namespace mg::cuda
