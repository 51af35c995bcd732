// The broadcast layout where's kernels share: out's shape and each input's element strides
// along it (0 where that input is broadcast), for the CPU loop and the CUDA kernel alike.
//   condition [..C], self [..S], other [..O] -> out [broadcast(C, S, O)], rank <= kWhereMaxRank
#pragma once

#include <cstdint>

#include "minigraph/op.h"

namespace mg {

inline constexpr int kWhereMaxRank = 8;

// Passed by value to the CUDA kernel, so of fixed size.
struct WhereLayout {
  int rank = 0;
  std::int64_t size[kWhereMaxRank] = {};
  std::int64_t stride[3][kWhereMaxRank] = {};  // condition, self, other
};

// The layout of the op's inputs against out's shape (the shape rule has checked them).
WhereLayout where_layout(const KernelContext& ctx);

void where_cpu(const KernelContext& ctx);
void where_cuda(const KernelContext& ctx);

}  // namespace mg
