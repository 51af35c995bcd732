// token_position_embedding on CUDA: check the ids on the device (the CPU's error
// for an out-of-range id), then the fused gather-and-add: one block per position writes
// tok[id] + pos[t] in a single pass over the output (llm.c's encoder forward), 16 bytes per
// load when the rows allow.
//   n = B*T positions, T sequence length, D width, V rows;
//   tok [V, D], pos [T, D] (from the offset), ids [n] -> out [n, D]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"
#include "token_position_embedding/token_position_embedding.h"

namespace mg::cuda {

namespace {

// Element: T or Vec16<T>; width counts Elements.
template <typename Element, typename Id>
__global__ void gather_rows_plus_positions_kernel(const Element* __restrict__ tok,
                                                  const Element* __restrict__ pos,
                                                  const Id* __restrict__ ids,
                                                  Element* __restrict__ out, std::int64_t count,
                                                  std::int64_t length, std::int64_t width) {
  for (std::int64_t row = blockIdx.x; row < count; row += gridDim.x) {
    const Element* token_row = tok + static_cast<std::int64_t>(ids[row]) * width;  // (D,)
    const Element* position_row = pos + (row % length) * width;                    // (D,)
    Element* dst = out + row * width;                                              // (D,)
    for (std::int64_t d = threadIdx.x; d < width; d += blockDim.x) {
      dst[d] = token_row[d] + position_row[d];
    }
  }
}

template <typename Element, typename Id>
void launch(const Element* tok, const Element* pos, const Id* ids, Element* out, std::int64_t count,
            std::int64_t length, std::int64_t width, cudaStream_t stream) {
  gather_rows_plus_positions_kernel<<<blocks_for(count, 1), threads_for_row(width), 0, stream>>>(
      tok, pos, ids, out, count, length, width);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T, typename Id>
void gather_rows_plus_positions(const T* tok, const T* pos, const Id* ids, T* out,
                                std::int64_t count, std::int64_t length, std::int64_t width,
                                cudaStream_t stream) {
  if (count == 0 || width == 0) return;
  if (vec16_ok<T>(width, tok, pos, out)) {
    using V = Vec16<T>;
    launch(reinterpret_cast<const V*>(tok), reinterpret_cast<const V*>(pos), ids,
           reinterpret_cast<V*>(out), count, length, width / kVecLanes<T>, stream);
  } else {
    launch(tok, pos, ids, out, count, length, width, stream);
  }
}

}  // namespace mg::cuda

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
