// Layout rules (layout.h).
#include "minigraph/layout.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "minigraph/error.h"

namespace mg {

Shape contiguous_strides(const Shape& shape) {
  Shape strides(shape.size());
  std::int64_t step = 1;
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    strides[axis] = step;
    // Saturated, not wrapped: the product passes INT64_MAX only beside a size 0 (the numel
    // fits otherwise), and an empty tensor's strides are never stepped.
    if (__builtin_mul_overflow(step, std::max<std::int64_t>(shape[axis], 1), &step)) {
      step = kInt64Max;
    }
  }
  return strides;
}

bool is_contiguous_layout(const Shape& shape, const Shape& strides) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return true;
  std::int64_t step = 1;
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    if (shape[axis] == 1) continue;
    if (strides[axis] != step) return false;
    step *= shape[axis];
  }
  return true;
}

std::int64_t layout_extent(const Shape& shape, const Shape& strides) {
  if (std::find(shape.begin(), shape.end(), 0) != shape.end()) return 0;
  std::int64_t last = 0;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    last = checked_add(last, checked_mul(shape[axis] - 1, strides[axis], "tensor", "strides"),
                       "tensor", "strides");
  }
  return checked_add(last, 1, "tensor", "strides");
}

bool has_internal_overlap(const Shape& shape, const Shape& strides) {
  // Axes that step, by stride: each must step past everything the smaller ones reach.
  std::vector<std::size_t> axes;
  for (std::size_t axis = 0; axis < shape.size(); ++axis) {
    if (shape[axis] == 0) return false;
    if (shape[axis] > 1) axes.push_back(axis);
  }
  std::sort(axes.begin(), axes.end(), [&](auto x, auto y) { return strides[x] < strides[y]; });
  std::int64_t reach = 0;  // the furthest offset the smaller axes reach
  for (std::size_t axis : axes) {
    if (strides[axis] <= reach) return true;
    reach += strides[axis] * (shape[axis] - 1);
  }
  return false;
}

std::optional<Shape> view_strides(const Shape& from, const Shape& from_strides,
                                  const Shape& shape) {
  if (from.empty() || std::find(from.begin(), from.end(), 0) != from.end()) {
    return contiguous_strides(shape);
  }
  Shape strides(shape.size());
  // Walk both shapes from the end in chunks of equal element count; inside a chunk `from` must
  // be contiguous with itself, and the new axes take strides inside it.
  std::int64_t view_axis = static_cast<std::int64_t>(shape.size()) - 1;
  std::int64_t chunk_base_stride = from_strides.back();
  std::int64_t tensor_numel = 1, view_numel = 1;
  for (std::int64_t axis = static_cast<std::int64_t>(from.size()) - 1; axis >= 0; --axis) {
    tensor_numel *= from[axis];
    const bool chunk_ends =
        axis == 0 ||
        (from[axis - 1] != 1 && from_strides[axis - 1] != tensor_numel * chunk_base_stride);
    if (!chunk_ends) continue;
    while (view_axis >= 0 && (view_numel < tensor_numel || shape[view_axis] == 1)) {
      strides[view_axis] = view_numel * chunk_base_stride;
      view_numel *= shape[view_axis];
      --view_axis;
    }
    if (view_numel != tensor_numel) return std::nullopt;
    if (axis > 0) {
      chunk_base_stride = from_strides[axis - 1];
      tensor_numel = view_numel = 1;
    }
  }
  if (view_axis != -1) return std::nullopt;
  return strides;
}

std::int64_t wrap_dim(std::int64_t dim, std::int64_t rank, std::string_view op,
                      std::string_view argument) {
  const std::int64_t axes = std::max<std::int64_t>(rank, 1);  // a scalar takes 0 and -1
  MG_CHECK(dim >= -axes && dim < axes, std::string(op), std::string(argument),
           fmt::format("an axis in [{}, {}] (rank {})", -axes, axes - 1, rank), "{}", dim);
  return dim < 0 ? dim + axes : dim;
}

}  // namespace mg
