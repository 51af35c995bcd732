#include "sum/reduce_dims.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "minigraph/error.h"

namespace mg {

ReduceShapes reduce_shapes(std::string_view op, const Shape& x,
                           const std::vector<std::int64_t>& dims, bool keepdim) {
  const std::int64_t rank = static_cast<std::int64_t>(x.size());
  const std::int64_t range = std::max<std::int64_t>(rank, 1);  // a scalar takes 0 and -1
  std::vector<bool> reduced(range, dims.empty());
  for (std::size_t i = 0; i < dims.size(); ++i) {
    const std::int64_t axis = dims[i];
    MG_CHECK(axis >= -range && axis < range, std::string(op), "dims",
             fmt::format("axes in [{}, {}) for x of shape {}", -range, range, shape_str(x)),
             "{} at position {}", axis, i);
    const std::int64_t k = axis < 0 ? axis + range : axis;
    MG_CHECK(!reduced[k], std::string(op), "dims", "each axis at most once",
             "axis {} named again as {} at position {} of dims {{{}}}", k, axis, i,
             fmt::join(dims, ", "));
    reduced[k] = true;
  }
  ReduceShapes shapes;
  Shape reduced_sizes;
  for (std::int64_t k = 0; k < rank; ++k) {
    shapes.keep.push_back(reduced[k] ? 1 : x[k]);
    if (reduced[k]) reduced_sizes.push_back(x[k]);
    if (!reduced[k] || keepdim) shapes.out.push_back(shapes.keep.back());
  }
  // Checked: with a kept axis of size 0, x holds no element however large the reduced ones are.
  shapes.count = shape_numel(reduced_sizes);
  return shapes;
}

std::string describe_reduce(const std::vector<std::int64_t>& dims, bool keepdim) {
  return fmt::format("dims={{{}}}, keepdim={}", fmt::join(dims, ", "), keepdim);
}

}  // namespace mg
