// position_embedding_backward on the CPU: zero the rows outside the window, copy the window.
#include <cstring>

#include "minigraph/op.h"
#include "position_embedding_backward/position_embedding_backward.h"

namespace mg {

void position_embedding_backward_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<PositionEmbeddingBackwardAttrs>();
  const Tensor& grad = ctx.inputs[0];
  const std::size_t row_bytes = ctx.out.size(1) * dtype_size(ctx.out.dtype());
  char* out = static_cast<char*>(ctx.out.raw_data());
  const std::size_t window = grad.nbytes(), before = a.offset * row_bytes;
  std::memset(out, 0, before);
  std::memcpy(out + before, grad.raw_data(), window);
  std::memset(out + before + window, 0, ctx.out.nbytes() - before - window);
}

// The naive reference: out [rows, D], element (r, d) = grad[r - offset, d] inside the window
// offset..offset+T-1 and zero outside it, one element at a time.
Tensor position_embedding_backward_reference(std::span<const Tensor> inputs,
                                             const std::any& attrs) {
  const auto& a = attrs_as<PositionEmbeddingBackwardAttrs>("position_embedding_backward", attrs);
  const Tensor& grad = inputs[0];  // [T, D]
  const std::int64_t length = grad.shape()[0], width = grad.shape()[1];
  Tensor out = Tensor::empty({a.rows, width}, grad.dtype());
  dispatch_float(grad.dtype(), [&]<typename T>() {
    const T* src = grad.data<T>();
    T* dst = out.data<T>();
    for (std::int64_t flat = 0; flat < out.numel(); ++flat) {
      const std::int64_t r = flat / width, d = flat % width;
      const bool inside = r >= a.offset && r < a.offset + length;
      dst[flat] = inside ? src[(r - a.offset) * width + d] : T(0);
    }
  });
  return out;
}

}  // namespace mg
