// What the triangle rows' kernels share: the geometry of x and the rule that keeps an element.
// x [..., R, C] is M = prod(...) matrices of R rows of C; element (m, r, c) sits at
// (m * R + r) * C + c of the contiguous input and output.
//   x [M, R, C] -> out [M, R, C]
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "minigraph/op.h"

namespace mg {

struct TriangleGeometry {
  std::int64_t rows = 0, cols = 0;  // R, C
  std::int64_t diagonal = 0;
  MG_HOST_DEVICE std::int64_t matrix_rows(std::int64_t numel) const {  // M * R
    return cols == 0 ? 0 : numel / cols;
  }
};
// x's geometry (its rank already checked by the shape rule) and the op's diagonal.
TriangleGeometry triangle_geometry(const Shape& shape, const std::any& attrs);

// Whether element (r, c) is kept: `offset` = c - r, which is small for any real shape, so the
// comparison with any int64 diagonal cannot overflow (r + diagonal could).
template <bool Upper>
MG_HOST_DEVICE inline bool triangle_keeps(std::int64_t offset, std::int64_t diagonal) {
  return Upper ? offset >= diagonal : offset <= diagonal;
}

// tril (Upper false) and triu (Upper true) as kernels.
template <bool Upper>
void triangle_cpu(const KernelContext& ctx);
template <bool Upper>
void triangle_cuda(const KernelContext& ctx);

}  // namespace mg
