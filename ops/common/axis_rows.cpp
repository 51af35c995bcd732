#include "common/axis_rows.h"

#include "minigraph/layout.h"

namespace mg {

AxisRows axis_rows(const Shape& shape, std::int64_t dim, std::string_view op) {
  const auto rank = static_cast<std::int64_t>(shape.size());
  const std::int64_t axis = wrap_dim(dim, rank, op);
  AxisRows rows;
  for (std::int64_t k = 0; k < rank; ++k) {
    if (k < axis) rows.outer *= shape[k];
    if (k == axis) rows.n = shape[k];
    if (k > axis) rows.inner *= shape[k];
  }
  return rows;
}

}  // namespace mg
