// position_embedding on the CPU: the rows are contiguous, so one copy.
#include <cstring>

#include "minigraph/op.h"
#include "position_embedding/position_embedding.h"

namespace mg {

void position_embedding_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<PositionEmbeddingAttrs>();
  const Tensor& table = ctx.inputs[0];
  const std::size_t row_bytes = table.size(1) * dtype_size(table.dtype());
  std::memcpy(ctx.out.raw_data(), static_cast<const char*>(table.raw_data()) + a.offset * row_bytes,
              ctx.out.nbytes());
}

// The naive reference: out [T, D], element (t, d) = table[offset + t, d], one element at a time.
Tensor position_embedding_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const auto& a = attrs_as<PositionEmbeddingAttrs>("position_embedding", attrs);
  const Tensor& table = inputs[0];  // [T_max, D]
  const std::int64_t width = table.shape()[1];
  Tensor out = Tensor::empty({a.length, width}, table.dtype());
  dispatch_float(table.dtype(), [&]<typename T>() {
    const T* src = table.data<T>();
    T* dst = out.data<T>();
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      const std::int64_t t = flat / width, d = flat % width;
      dst[flat] = src[(a.offset + t) * width + d];
    }
  });
  return out;
}

}  // namespace mg
