// The one layout helper of the CUDA kernels that walk broadcasts and reductions (the elementwise
// ops, broadcast_to, sum_to and the reductions built on it): the output's shape with size-1
// axes dropped and axes that are contiguous in both inputs merged, and each input's element
// stride per merged axis; a reduction's kept and summed axis groups are read off the same. Plain
// C++17 with standard headers only: the CPU tests check it, and the .cu files (nvcc, C++17, no
// minigraph headers) take the struct as a kernel argument.
#pragma once

#include <cstdint>
#include <string_view>
#include <vector>

namespace mg {

// Kernels carry the layout by value, so its size is fixed.
inline constexpr int kMaxBroadcastGroups = 8;

// out's merged axes (outermost first) and each input's element stride along them (0 where that
// input is broadcast). Element i of out, unravelled by `size`, reads a and b at the dot product
// of its index with stride_a and stride_b.
struct BroadcastLayout {
  int rank;  // 1..kMaxBroadcastGroups; a single element is one axis of size 1
  std::int64_t size[kMaxBroadcastGroups];
  std::int64_t stride_a[kMaxBroadcastGroups];
  std::int64_t stride_b[kMaxBroadcastGroups];
};

// The layout of out = f(a, b) for contiguous a and b that broadcast to `out` (the shape rule has
// checked that). a stays a and b stays b: the order matters for a - b and a / b. Throws
// mg::Error naming `op` and `argument` when more than kMaxBroadcastGroups axis groups remain
// after merging. A one-input broadcast (broadcast_to) passes out as b: a contiguous b never
// stops a merge. Shapes are mg::Shape, spelled out here to keep minigraph/dtype.h (C++20)
// away from nvcc.
BroadcastLayout broadcast_layout(std::string_view op, const std::vector<std::int64_t>& a,
                                 const std::vector<std::int64_t>& b,
                                 const std::vector<std::int64_t>& out,
                                 std::string_view argument = "b");
// The same for views: a and b laid out by their own strides (in elements, 0 where expanded).
BroadcastLayout broadcast_layout(std::string_view op, const std::vector<std::int64_t>& a,
                                 const std::vector<std::int64_t>& a_strides,
                                 const std::vector<std::int64_t>& b,
                                 const std::vector<std::int64_t>& b_strides,
                                 const std::vector<std::int64_t>& out,
                                 std::string_view argument = "b");

// Axes of x flattened into one index: index -> offset through mixed-radix sizes and strides.
struct AxisGroup {
  int rank = 1;
  std::int64_t size[kMaxBroadcastGroups] = {1};
  std::int64_t stride[kMaxBroadcastGroups] = {0};
  std::int64_t count = 1;  // product of the sizes
};

// A reduction of contiguous, non-empty x to `target` (which broadcasts to x): x's merged axis
// groups split into those kept in the output (in its order) and those summed away. It is the
// broadcast layout of target to x read the other way: target's stride is 0 exactly on the
// summed groups, x's strides are the groups' strides. At most kMaxBroadcastGroups groups in all.
struct ReduceLayout {
  AxisGroup kept;
  AxisGroup reduced;
};
ReduceLayout reduce_layout(std::string_view op, const std::vector<std::int64_t>& x,
                           const std::vector<std::int64_t>& target);
// The same for x laid out by `x_strides` (a view): the groups' strides are x's own.
ReduceLayout reduce_layout(std::string_view op, const std::vector<std::int64_t>& x,
                           const std::vector<std::int64_t>& x_strides,
                           const std::vector<std::int64_t>& target);

}  // namespace mg
