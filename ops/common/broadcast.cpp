#include "broadcast.h"

#include <algorithm>

#include "minigraph/layout.h"

namespace mg {

bool broadcast_shapes(const Shape& a, const Shape& b, Shape& out) {
  const std::size_t rank = std::max(a.size(), b.size());
  out.assign(rank, 1);
  for (std::size_t i = 0; i < rank; ++i) {
    std::int64_t da = i < rank - a.size() ? 1 : a[i - (rank - a.size())];
    std::int64_t db = i < rank - b.size() ? 1 : b[i - (rank - b.size())];
    if (da != db && da != 1 && db != 1) return false;
    out[i] = da == 1 ? db : da;
  }
  return true;
}

std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& out) {
  return broadcast_strides(in, contiguous_strides(in), out);
}

std::vector<std::int64_t> broadcast_strides(const Shape& in, const Shape& in_strides,
                                            const Shape& out) {
  std::vector<std::int64_t> strides(out.size(), 0);
  for (std::size_t k = 0; k < in.size(); ++k) {
    std::size_t axis_in = in.size() - 1 - k, axis_out = out.size() - 1 - k;
    strides[axis_out] = in[axis_in] == 1 ? 0 : in_strides[axis_in];
  }
  return strides;
}

bool is_leading_broadcast(const Shape& in, const Shape& out) {
  // Leading size-1 axes of `in` are dropped: [1, T, D] repeats over leading axes like [T, D].
  std::size_t skip = 0;
  while (skip < in.size() && in[skip] == 1) ++skip;
  std::size_t rank = in.size() - skip;
  if (rank > out.size()) return false;
  return std::equal(in.begin() + skip, in.end(), out.end() - rank);
}

}  // namespace mg
