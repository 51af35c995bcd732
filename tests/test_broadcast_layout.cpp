// broadcast_layout and reduce_layout (ops/common/broadcast_layout.h), the layouts the CUDA
// elementwise, broadcast_to and sum_to kernels walk, checked on the CPU: size-1 axes dropped,
// contiguous axes merged, a and b kept in order, every output element mapped to the elements
// NumPy's rule names, and the 8-group limit as an error.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <utility>
#include <vector>

#include "../ops/common/broadcast_layout.h"
#include "expect_error.h"
#include "minigraph/dtype.h"

namespace mg {
namespace {

// What a kernel does with the layout: unravel out's flat index i over the merged sizes.
std::pair<std::int64_t, std::int64_t> layout_offsets(const BroadcastLayout& layout,
                                                     std::int64_t i) {
  std::int64_t offset_a = 0, offset_b = 0;
  for (int axis = layout.rank - 1; axis >= 0; --axis) {
    const std::int64_t index = i % layout.size[axis];
    i /= layout.size[axis];
    offset_a += index * layout.stride_a[axis];
    offset_b += index * layout.stride_b[axis];
  }
  return {offset_a, offset_b};
}

// NumPy's rule, spelled out: the element of `in` that out's flat index i reads.
std::int64_t numpy_offset(const Shape& in, const Shape& out, std::int64_t i) {
  std::vector<std::int64_t> index(out.size());
  for (std::size_t axis = out.size(); axis-- > 0;) {
    index[axis] = i % out[axis];
    i /= out[axis];
  }
  std::int64_t flat = 0;
  for (std::size_t k = 0; k < in.size(); ++k) {
    flat = flat * in[k] + (in[k] == 1 ? 0 : index[out.size() - in.size() + k]);
  }
  return flat;
}

std::int64_t numel(const Shape& shape) {
  std::int64_t n = 1;
  for (std::int64_t s : shape) n *= s;
  return n;
}

void expect_maps_like_numpy(const Shape& a, const Shape& b, const Shape& out) {
  const BroadcastLayout layout = broadcast_layout("test", a, b, out);
  std::int64_t count = 1;
  for (int axis = 0; axis < layout.rank; ++axis) count *= layout.size[axis];
  ASSERT_EQ(count, numel(out)) << shape_str(a) << " with " << shape_str(b);
  for (std::int64_t i = 0; i < numel(out); ++i) {
    const auto [offset_a, offset_b] = layout_offsets(layout, i);
    ASSERT_EQ(offset_a, numpy_offset(a, out, i)) << "a " << shape_str(a) << ", element " << i;
    ASSERT_EQ(offset_b, numpy_offset(b, out, i)) << "b " << shape_str(b) << ", element " << i;
  }
}

TEST(BroadcastLayout, EqualShapesMergeIntoOneAxis) {
  const BroadcastLayout layout = broadcast_layout("test", {2, 3, 4}, {2, 3, 4}, {2, 3, 4});
  ASSERT_EQ(layout.rank, 1);
  EXPECT_EQ(layout.size[0], 24);
  EXPECT_EQ(layout.stride_a[0], 1);
  EXPECT_EQ(layout.stride_b[0], 1);
}

TEST(BroadcastLayout, RepeatedOperandGivesTwoGroupsInOperandOrder) {
  // [B, T, D] with [T, D]: the leading axis repeats b; T and D merge.
  BroadcastLayout layout = broadcast_layout("test", {2, 3, 4}, {3, 4}, {2, 3, 4});
  ASSERT_EQ(layout.rank, 2);
  EXPECT_EQ(layout.size[0], 2);
  EXPECT_EQ(layout.size[1], 12);
  EXPECT_EQ(layout.stride_a[0], 12);
  EXPECT_EQ(layout.stride_b[0], 0);
  EXPECT_EQ(layout.stride_a[1], 1);
  EXPECT_EQ(layout.stride_b[1], 1);
  // The operands swapped: the strides swap with them (a - b is not b - a).
  layout = broadcast_layout("test", {3, 4}, {2, 3, 4}, {2, 3, 4});
  ASSERT_EQ(layout.rank, 2);
  EXPECT_EQ(layout.stride_a[0], 0);
  EXPECT_EQ(layout.stride_b[0], 12);
}

TEST(BroadcastLayout, DropsSizeOneAxes) {
  // The size-1 axis between 2 and 3 is dropped, after which all of out is contiguous.
  BroadcastLayout layout = broadcast_layout("test", {2, 1, 3}, {2, 1, 3}, {2, 1, 3});
  ASSERT_EQ(layout.rank, 1);
  EXPECT_EQ(layout.size[0], 6);
  // Only size-1 axes: one element, one axis of size 1.
  layout = broadcast_layout("test", {1, 1}, {1}, {1, 1});
  ASSERT_EQ(layout.rank, 1);
  EXPECT_EQ(layout.size[0], 1);
  EXPECT_EQ(layout.stride_a[0], 0);
  EXPECT_EQ(layout.stride_b[0], 0);
  // Rank 0 (two scalars) likewise.
  layout = broadcast_layout("test", {}, {}, {});
  ASSERT_EQ(layout.rank, 1);
  EXPECT_EQ(layout.size[0], 1);
}

TEST(BroadcastLayout, DoesNotMergeAxesThatAlternateBroadcasting) {
  // a [2, 1, 4] with b [3, 1]: out [2, 3, 4], each axis broadcasts a different operand.
  const BroadcastLayout layout = broadcast_layout("test", {2, 1, 4}, {3, 1}, {2, 3, 4});
  ASSERT_EQ(layout.rank, 3);
  EXPECT_EQ(layout.size[0], 2);
  EXPECT_EQ(layout.size[1], 3);
  EXPECT_EQ(layout.size[2], 4);
  EXPECT_EQ(layout.stride_a[0], 4);
  EXPECT_EQ(layout.stride_a[1], 0);
  EXPECT_EQ(layout.stride_a[2], 1);
  EXPECT_EQ(layout.stride_b[0], 0);
  EXPECT_EQ(layout.stride_b[1], 1);
  EXPECT_EQ(layout.stride_b[2], 0);
}

TEST(BroadcastLayout, MapsEveryElementAsNumPyDoes) {
  const std::vector<std::pair<Shape, Shape>> pairs = {
      {{3, 4}, {3, 4}},
      {{2, 3, 4}, {3, 4}},
      {{3, 4}, {2, 3, 4}},
      {{2, 1, 4}, {3, 1}},
      {{2, 1, 4, 1}, {2, 3, 1, 5}},
      {{5, 3}, {}},
      {{}, {5, 3}},
      {{1, 1}, {1}},
      {{2, 3, 1, 1, 4}, {3, 5, 1, 4}},
      {{1, 6, 1}, {4, 1, 7}},
      {{0, 3}, {3}},
  };
  for (const auto& [a, b] : pairs) {
    Shape out(std::max(a.size(), b.size()));
    for (std::size_t k = 0; k < out.size(); ++k) {
      const std::size_t from_end = out.size() - 1 - k;
      const std::int64_t sa = from_end < a.size() ? a[a.size() - 1 - from_end] : 1;
      const std::int64_t sb = from_end < b.size() ? b[b.size() - 1 - from_end] : 1;
      out[k] = sa == 1 ? sb : sa;
    }
    expect_maps_like_numpy(a, b, out);
  }
}

TEST(BroadcastLayout, AtMostEightGroups) {
  // Every axis broadcasts the other operand than its neighbours: nothing merges.
  const Shape a8 = {2, 1, 2, 1, 2, 1, 2, 1}, b8 = {1, 2, 1, 2, 1, 2, 1, 2};
  const Shape out8(8, 2);
  EXPECT_EQ(broadcast_layout("test", a8, b8, out8).rank, 8);
  expect_maps_like_numpy(a8, b8, out8);
  const Shape a9 = {2, 1, 2, 1, 2, 1, 2, 1, 2}, b9 = {1, 2, 1, 2, 1, 2, 1, 2, 1};
  const Shape out9(9, 2);
  testing::expect_error_containing([&] { broadcast_layout("sub", a9, b9, out9); },
                                   "at most 8 axis groups");
  EXPECT_EQ(testing::expect_error([&] { broadcast_layout("sub", a9, b9, out9); }).op(), "sub");
  // Nine axes that merge into fewer groups are fine.
  EXPECT_EQ(broadcast_layout("test", Shape(9, 2), Shape(9, 2), Shape(9, 2)).rank, 1);
}

// reduce_layout, what the CUDA sum_to walks: every element of x is summed exactly once, into
// the output element NumPy's rule pairs it with (out[j] gathers x's elements that broadcast
// from target element j).
std::int64_t group_offset(const AxisGroup& group, std::int64_t index) {
  std::int64_t offset = 0;
  for (int axis = group.rank - 1; axis >= 0; --axis) {
    offset += (index % group.size[axis]) * group.stride[axis];
    index /= group.size[axis];
  }
  return offset;
}

void expect_reduces_like_numpy(const Shape& x, const Shape& target) {
  const ReduceLayout layout = reduce_layout("test", x, target);
  ASSERT_EQ(layout.kept.count, numel(target)) << shape_str(x) << " to " << shape_str(target);
  ASSERT_EQ(layout.kept.count * layout.reduced.count, numel(x));
  std::vector<int> seen(static_cast<std::size_t>(numel(x)), 0);
  for (std::int64_t j = 0; j < layout.kept.count; ++j) {
    for (std::int64_t r = 0; r < layout.reduced.count; ++r) {
      const std::int64_t offset = group_offset(layout.kept, j) + group_offset(layout.reduced, r);
      ASSERT_GE(offset, 0);
      ASSERT_LT(offset, numel(x));
      ++seen[static_cast<std::size_t>(offset)];
      ASSERT_EQ(numpy_offset(target, x, offset), j)
          << shape_str(x) << " to " << shape_str(target) << ": x element " << offset;
    }
  }
  EXPECT_TRUE(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
}

TEST(ReduceLayout, SumsEveryElementOnceIntoItsNumpyTarget) {
  const std::vector<std::pair<Shape, Shape>> cases = {
      {{2, 3, 4}, {}},        {{2, 3, 4}, {3, 4}},    {{2, 3, 4}, {2, 1, 4}},
      {{2, 3, 4}, {1, 3, 1}}, {{2, 3, 4}, {2, 3, 4}}, {{5}, {1}},
      {{1, 1}, {1}},          {{4, 1, 6}, {1, 6}},    {{2, 3, 4, 5}, {3, 1, 5}},
      {{16, 8}, {8}},
  };
  for (const auto& [x, target] : cases) expect_reduces_like_numpy(x, target);
  // The input layer's position gradient: [B, T, D] to [T, D] keeps one merged group.
  const ReduceLayout position = reduce_layout("test", {8, 1024, 768}, {1024, 768});
  EXPECT_EQ(position.kept.rank, 1);
  EXPECT_EQ(position.kept.count, 1024 * 768);
  EXPECT_EQ(position.reduced.count, 8);
  EXPECT_EQ(position.reduced.stride[0], 1024 * 768);
  testing::expect_error_containing(
      [] {
        reduce_layout("sum_to", Shape(9, 2), {2, 1, 2, 1, 2, 1, 2, 1, 2});
      },
      "at most 8 axis groups");
}

}  // namespace
}  // namespace mg
