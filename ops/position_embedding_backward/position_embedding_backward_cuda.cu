// position_embedding_backward on CUDA: zero the rows outside the window and copy the window,
// each a single memset or device-to-device copy on the backend's stream.
//   grad [T, D] -> out [T_max, D], rows offset..offset+T-1 = grad, the rest zero
#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"
#include "position_embedding_backward/position_embedding_backward.h"

namespace mg {

void position_embedding_backward_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<PositionEmbeddingBackwardAttrs>();
  const Tensor& grad = ctx.inputs[0];
  CudaBackend& backend = cuda::activate(ctx.out.device());
  const std::size_t row_bytes = ctx.out.size(1) * dtype_size(ctx.out.dtype());
  char* out = static_cast<char*>(ctx.out.raw_data());
  const std::size_t window = grad.nbytes(), before = a.offset * row_bytes;
  backend.fill_zero(out, before);
  backend.copy(out + before, grad.raw_data(), window);
  backend.fill_zero(out + before + window, ctx.out.nbytes() - before - window);
}

}  // namespace mg
