// position_embedding on CUDA: rows offset..offset+T-1 are contiguous, so the whole window is one
// device-to-device copy on the backend's stream: no kernel beats the copy engine at a memcpy.
//   table [T_max, D] -> out [T, D]
#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"
#include "position_embedding/position_embedding.h"

namespace mg {

void position_embedding_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<PositionEmbeddingAttrs>();
  const Tensor& table = ctx.inputs[0];
  const std::size_t row_bytes = table.size(1) * dtype_size(table.dtype());
  cuda::activate(ctx.out.device())
      .copy(ctx.out.raw_data(), static_cast<const char*>(table.raw_data()) + a.offset * row_bytes,
            ctx.out.nbytes());
}

}  // namespace mg
