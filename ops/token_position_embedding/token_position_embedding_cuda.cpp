// token_position_embedding on CUDA, the host side: check the ids on the device (the CPU's error
// for an out-of-range id), then the fused gather-and-add (token_position_embedding_cuda.cu).
#include "token_position_embedding/token_position_embedding_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"
#include "token_position_embedding/token_position_embedding.h"

namespace mg {

void token_position_embedding_cuda(const KernelContext& ctx) {
  const Tensor& tok = ctx.inputs[0];  // [V, D]
  const Tensor& pos = ctx.inputs[1];  // [T_max, D]
  const Tensor& ids = ctx.inputs[2];  // [..., T]
  const std::int64_t rows = tok.size(0), width = tok.size(1);
  const std::int64_t offset = ctx.attrs_as<TokenPositionEmbeddingAttrs>().offset;
  CudaBackend& backend = cuda::activate(ctx.out.device());
  if (auto bad = cuda::first_bad_id(ids, rows)) {
    throw_bad_id("token_position_embedding", bad->id, bad->position, ids.shape(), rows);
  }
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      cuda::gather_rows_plus_positions(tok.data<T>(), pos.data<T>() + offset * width,
                                       ids.data<Id>(), ctx.out.data<T>(), ids.numel(), ids.size(-1),
                                       width, backend.stream());
    });
  });
}

}  // namespace mg
