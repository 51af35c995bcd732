// embedding on the CPU: check every id first (so a bad id throws before any work), then copy
// one table row per id.
#include <cstring>

#include "common/ids.h"
#include "minigraph/op.h"

namespace mg {

namespace {

template <typename T, typename Id>
void gather_rows(const Tensor& table, const Tensor& ids, Tensor& out, bool use_memcpy) {
  const std::int64_t rows = table.size(0), width = table.size(1), n = ids.numel();
  const Id* id = ids.data<Id>();
  check_ids_in_range("embedding", id, ids.shape(), rows);
  const T* src = table.data<T>();
  T* dst = out.data<T>();
  for (std::int64_t i = 0; i < n; ++i) {
    if (use_memcpy) {
      std::memcpy(dst + i * width, src + id[i] * width, width * sizeof(T));
    } else {
      for (std::int64_t d = 0; d < width; ++d) dst[i * width + d] = src[id[i] * width + d];
    }
  }
}

void run(const KernelContext& ctx, bool use_memcpy) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      gather_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out, use_memcpy);
    });
  });
}

}  // namespace

void embedding_cpu(const KernelContext& ctx) { run(ctx, true); }
void embedding_reference(const KernelContext& ctx) { run(ctx, false); }

}  // namespace mg
