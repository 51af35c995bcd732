// NumPy broadcasting, shared by the kernels of add, sum_to and broadcast_to (never by their
// naive references, which spell the rule out on their own so that an error here cannot hide).
#pragma once

#include <string>
#include <vector>

#include "minigraph/dtype.h"

namespace mg {

// The broadcast shape of a and b, or nullopt-like empty result with ok = false.
bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out);

// Strides of `in` (row-major, contiguous) aligned to the rank of `out`, 0 on broadcast axes.
std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out);
// The same for `in` laid out by `in_strides` (a view): its own strides, 0 on broadcast axes.
std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& in_strides,
                                            const Shape& out);

// Calls fn(out_index, in_offset...) for every element of `out`, in row-major order, with the
// offset of the matching element of each input (given by its broadcast strides).
template <typename Fn>
void for_each_broadcast(const Shape& out, const std::vector<std::int64_t>& strides_a,
                        const std::vector<std::int64_t>& strides_b, Fn&& fn) {
  const std::size_t rank = out.size();
  std::vector<std::int64_t> index(rank, 0);
  std::int64_t n = shape_numel(out), off_a = 0, off_b = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    fn(i, off_a, off_b);
    for (std::size_t axis = rank; axis-- > 0;) {
      off_a += strides_a[axis];
      off_b += strides_b[axis];
      if (++index[axis] < out[axis]) break;
      off_a -= strides_a[axis] * out[axis];
      off_b -= strides_b[axis] * out[axis];
      index[axis] = 0;
    }
  }
}

// True when `in` broadcasts to `out` only by repeating it over leading axes: out = [..., in].
bool is_leading_broadcast(const Shape& in, const Shape& out);

}  // namespace mg
