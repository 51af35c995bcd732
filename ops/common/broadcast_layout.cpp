// broadcast_layout: one pass over out's axes, outermost first. An axis of size 1 adds nothing
// to any offset and is dropped; an axis merges into the group before it when both inputs step
// across the whole of it exactly as they step to the group's next index (stride * size).
//   a [..A], b [..B] -> out [broadcast(A, B)] -> layout [G], G <= kMaxBroadcastGroups
#include "common/broadcast_layout.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "common/broadcast.h"
#include "minigraph/error.h"
#include "minigraph/layout.h"

namespace mg {

BroadcastLayout broadcast_layout(std::string_view op, const Shape& a, const Shape& b,
                                 const Shape& out, std::string_view argument) {
  return broadcast_layout(op, a, contiguous_strides(a), b, contiguous_strides(b), out, argument);
}

BroadcastLayout broadcast_layout(std::string_view op, const Shape& a, const Shape& a_strides,
                                 const Shape& b, const Shape& b_strides, const Shape& out,
                                 std::string_view argument) {
  const auto stride_a = broadcast_strides(a, a_strides, out);
  const auto stride_b = broadcast_strides(b, b_strides, out);
  BroadcastLayout layout{};
  int rank = 0;
  for (std::size_t axis = 0; axis < out.size(); ++axis) {
    if (out[axis] == 1) continue;
    const bool merges = rank > 0 && layout.stride_a[rank - 1] == stride_a[axis] * out[axis] &&
                        layout.stride_b[rank - 1] == stride_b[axis] * out[axis];
    if (merges) {
      layout.size[rank - 1] *= out[axis];
    } else {
      MG_CHECK(rank < kMaxBroadcastGroups, std::string(op), std::string(argument),
               fmt::format("a broadcast of at most {} axis groups on CUDA", kMaxBroadcastGroups),
               "shapes {} and {}", shape_str(a), shape_str(b));
      layout.size[rank] = out[axis];
      ++rank;
    }
    layout.stride_a[rank - 1] = stride_a[axis];
    layout.stride_b[rank - 1] = stride_b[axis];
  }
  if (rank == 0) {  // a single element (every stride stays 0)
    layout.size[0] = 1;
    rank = 1;
  }
  layout.rank = rank;
  return layout;
}

ReduceLayout reduce_layout(std::string_view op, const Shape& x, const Shape& target) {
  return reduce_layout(op, x, contiguous_strides(x), target);
}

ReduceLayout reduce_layout(std::string_view op, const Shape& x, const Shape& x_strides,
                           const Shape& target) {
  const BroadcastLayout groups =
      broadcast_layout(op, target, contiguous_strides(target), x, x_strides, x, "shape");
  ReduceLayout layout;
  int kept = 0, reduced = 0;
  for (int g = 0; g < groups.rank; ++g) {  // outermost first
    const bool keeps = groups.stride_a[g] != 0;
    AxisGroup& into = keeps ? layout.kept : layout.reduced;
    int& rank = keeps ? kept : reduced;
    into.size[rank] = groups.size[g];
    into.stride[rank] = groups.stride_b[g];
    ++rank;
  }
  for (auto [group, rank] : {std::pair{&layout.kept, kept}, std::pair{&layout.reduced, reduced}}) {
    group->rank = std::max(rank, 1);  // none: one index, offset 0 (the defaults)
    group->count = 1;
    for (int axis = 0; axis < rank; ++axis) group->count *= group->size[axis];
  }
  return layout;
}

}  // namespace mg
