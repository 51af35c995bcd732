// embedding on the CPU: check every id first (so a bad id throws before any work), then copy
// one table row per id, positions split across threads (each writes its own output rows).
#include <cstring>

#include "common/ids.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// out [n, width] = table [rows, width] gathered by id [n]
template <typename T, typename Id>
void gather_rows(const Tensor& table, const Tensor& ids, Tensor& out) {
  const std::int64_t rows = table.size(0), width = table.size(1), n = ids.numel();
  const Id* id = ids.data<Id>();
  check_ids_in_range("embedding", id, ids.shape(), rows);
  const T* src = table.data<T>();
  T* dst = out.data<T>();
  const int parts = threads_for(n * width);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(n, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) {
      std::memcpy(dst + i * width, src + id[i] * width, width * sizeof(T));
    }
  });
}

template <typename T, typename Id>
void gather_rows_reference(const Tensor& table, const Tensor& ids, Tensor& out) {
  const std::int64_t rows = table.size(0), width = table.size(1), n = ids.numel();
  const Id* id = ids.data<Id>();
  check_ids_in_range("embedding", id, ids.shape(), rows);
  const T* src = table.data<T>();
  T* dst = out.data<T>();
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t d = 0; d < width; ++d) dst[i * width + d] = src[id[i] * width + d];
  }
}

}  // namespace

void embedding_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(),
                 [&]<typename Id>() { gather_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out); });
  });
}

void embedding_reference(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(), [&]<typename Id>() {
      gather_rows_reference<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out);
    });
  });
}

}  // namespace mg
