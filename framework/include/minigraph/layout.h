// Layouts: how a tensor's shape maps onto its storage. A layout is a shape, strides in elements
// (one per axis, 0 on an axis that repeats one element, as expand makes) and an offset; row-major
// without gaps is "contiguous". The rules that views, writes and kernels share, in one place.
#pragma once

#include <cstdint>
#include <optional>
#include <string_view>

#include "minigraph/dtype.h"

namespace mg {

// Row-major strides of `shape`: the last axis 1, each other the product of the sizes after it.
Shape contiguous_strides(const Shape& shape);

// Whether (shape, strides) is row-major without gaps. A size-1 axis's stride does not matter
// (it is never stepped), nor does any stride of an empty tensor, as in PyTorch.
bool is_contiguous_layout(const Shape& shape, const Shape& strides);

// One past the furthest element the layout reaches from its offset: the storage it needs.
// 0 for no elements. Throws mg::Error past INT64_MAX.
std::int64_t layout_extent(const Shape& shape, const Shape& strides);

// Whether two indices reach the same element (an expanded axis): a write through such a layout
// would write one element several times, so writes refuse it.
bool has_internal_overlap(const Shape& shape, const Shape& strides);

// The strides under which `shape` reads the elements of (from, from_strides) in the same
// row-major order, or nullopt when none can (a transposed tensor viewed flat): view's rule,
// PyTorch's computeStride.
std::optional<Shape> view_strides(const Shape& from, const Shape& from_strides, const Shape& shape);

// An axis in [-rank, rank) as an index in [0, rank); anything else is an mg::Error naming `op`
// and `argument`. For an op that inserts an axis (unsqueeze), pass rank + 1.
std::int64_t wrap_dim(std::int64_t dim, std::int64_t rank, std::string_view op,
                      std::string_view argument = "dim");

// Bytes that contiguous() copied in this process (the dispatcher's copies for kernels that take
// contiguous inputs included): the cost of layout changes, which `minigraph bench` reports.
std::uint64_t layout_copy_bytes();

}  // namespace mg
