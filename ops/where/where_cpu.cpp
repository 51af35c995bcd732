// where on the CPU: out's elements in contiguous ranges across threads; each range unravels
// its first index once, then steps the three inputs' offsets along with out's index (a
// broadcast input steps by 0). Inputs come contiguous (the dispatcher's copies of views).
//   condition [..C], self [..S], other [..O] -> out [broadcast(C, S, O)]
#include "minigraph/threads.h"
#include "where/where_kernels.h"

namespace mg {

namespace {

template <typename T>
void where_range(const WhereLayout& layout, const bool* cond, const T* self, const T* other, T* out,
                 std::int64_t begin, std::int64_t end) {
  std::int64_t index[kWhereMaxRank] = {}, offset[3] = {};
  std::int64_t rest = begin;
  for (int axis = layout.rank - 1; axis >= 0; --axis) {
    index[axis] = rest % layout.size[axis];
    rest /= layout.size[axis];
    for (int k = 0; k < 3; ++k) offset[k] += index[axis] * layout.stride[k][axis];
  }
  for (std::int64_t i = begin; i < end; ++i) {
    out[i] = cond[offset[0]] ? self[offset[1]] : other[offset[2]];
    for (int axis = layout.rank - 1; axis >= 0; --axis) {
      for (int k = 0; k < 3; ++k) offset[k] += layout.stride[k][axis];
      if (++index[axis] < layout.size[axis]) break;
      for (int k = 0; k < 3; ++k) offset[k] -= layout.stride[k][axis] * layout.size[axis];
      index[axis] = 0;
    }
  }
}

}  // namespace

void where_cpu(const KernelContext& ctx) {
  const std::int64_t n = ctx.out.numel();
  if (n == 0) return;
  const WhereLayout layout = where_layout(ctx);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const bool* cond = ctx.inputs[0].data<bool>();
    const T* self = ctx.inputs[1].data<T>();
    const T* other = ctx.inputs[2].data<T>();
    T* out = ctx.out.data<T>();
    const int parts = threads_for(n);
    parallel_for(parts, [&](int part) {
      const Range r = part_range(n, parts, part);
      where_range(layout, cond, self, other, out, r.begin, r.end);
    });
  });
}

}  // namespace mg
