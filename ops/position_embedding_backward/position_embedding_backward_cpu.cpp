// position_embedding_backward on the CPU: zero the rows outside the window, copy the window.
#include <cstring>

#include "minigraph/op.h"
#include "position_embedding_backward/position_embedding_backward.h"

namespace mg {

void position_embedding_backward_cpu(const KernelContext& ctx) {
  const auto& a = attrs_as<PositionEmbeddingBackwardAttrs>(ctx.attrs);
  const Tensor& grad = ctx.inputs[0];
  const std::size_t row_bytes = ctx.out.size(1) * dtype_size(ctx.out.dtype());
  char* out = static_cast<char*>(ctx.out.raw_data());
  const std::size_t window = grad.nbytes(), before = a.offset * row_bytes;
  std::memset(out, 0, before);
  std::memcpy(out + before, grad.raw_data(), window);
  std::memset(out + before + window, 0, ctx.out.nbytes() - before - window);
}

void position_embedding_backward_reference(const KernelContext& ctx) {
  const auto& a = attrs_as<PositionEmbeddingBackwardAttrs>(ctx.attrs);
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    const std::int64_t width = ctx.out.size(1), length = ctx.inputs[0].size(0);
    const T* src = ctx.inputs[0].data<T>();
    T* dst = ctx.out.data<T>();
    for (std::int64_t r = 0; r < a.rows; ++r) {
      for (std::int64_t d = 0; d < width; ++d) {
        bool inside = r >= a.offset && r < a.offset + length;
        dst[r * width + d] = inside ? src[(r - a.offset) * width + d] : T(0);
      }
    }
  });
}

}  // namespace mg
