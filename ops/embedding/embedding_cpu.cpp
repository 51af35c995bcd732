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

}  // namespace

void embedding_cpu(const KernelContext& ctx) {
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ctx.inputs[1].dtype(),
                 [&]<typename Id>() { gather_rows<T, Id>(ctx.inputs[0], ctx.inputs[1], ctx.out); });
  });
}

// The naive reference, written apart from the kernel (no common/ids.h, no gather_rows): the
// output is ids' shape plus D; element (p, d) is table[ids[p], d].
Tensor embedding_reference(std::span<const Tensor> inputs, const std::any&) {
  const Tensor& table = inputs[0];  // [V, D]
  const Tensor& ids = inputs[1];    // [...]
  const std::int64_t rows = table.shape()[0], width = table.shape()[1];
  Shape shape = ids.shape();
  shape.push_back(width);
  Tensor out = Tensor::empty(shape, table.dtype());
  dispatch_float(table.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      const T* src = table.data<T>();
      const Id* id = ids.data<Id>();
      T* dst = out.data<T>();
      for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
        const std::int64_t p = flat / width, d = flat % width;
        const std::int64_t row = static_cast<std::int64_t>(id[p]);
        MG_CHECK(row >= 0 && row < rows, "embedding_reference", "ids",
                 fmt::format("ids in [0, {})", rows), "id {} at flat position {}", row, p);
        dst[flat] = src[row * width + d];
      }
    });
  });
  return out;
}

}  // namespace mg
