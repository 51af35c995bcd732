// position_embedding on the CPU: the rows are contiguous, so one copy.
#include <cstring>

#include "minigraph/op.h"
#include "position_embedding/position_embedding.h"

namespace mg {

void position_embedding_cpu(const KernelContext& ctx) {
  const auto& a = attrs_as<PositionEmbeddingAttrs>(ctx.attrs);
  const Tensor& table = ctx.inputs[0];
  const std::size_t row_bytes = table.size(1) * dtype_size(table.dtype());
  std::memcpy(ctx.out.raw_data(), static_cast<const char*>(table.raw_data()) + a.offset * row_bytes,
              ctx.out.nbytes());
}

void position_embedding_reference(const KernelContext& ctx) {
  const auto& a = attrs_as<PositionEmbeddingAttrs>(ctx.attrs);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const std::int64_t width = ctx.out.size(1);
    const T* src = ctx.inputs[0].data<T>();
    T* dst = ctx.out.data<T>();
    for (std::int64_t t = 0; t < a.length; ++t)
      for (std::int64_t d = 0; d < width; ++d) dst[t * width + d] = src[(a.offset + t) * width + d];
  });
}

}  // namespace mg
