// where on CUDA: a thread per output element (grid-stride), its index unravelled by out's
// shape into the three inputs' offsets (a broadcast input has stride 0 there).
//   condition [..C], self [..S], other [..O] -> out [broadcast(C, S, O)]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "where/where_kernels.h"

namespace mg {

namespace {

using cuda::blocks_for;
using cuda::global_stride;
using cuda::global_thread;
using cuda::kThreadsPerBlock;

template <typename T>
__global__ void where_kernel(const bool* __restrict__ cond, const T* __restrict__ self,
                             const T* __restrict__ other, T* __restrict__ out, std::int64_t count,
                             WhereLayout layout) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    std::int64_t rest = i, offset[3] = {0, 0, 0};
    for (int axis = layout.rank - 1; axis >= 0; --axis) {
      const std::int64_t index = rest % layout.size[axis];
      rest /= layout.size[axis];
      for (int k = 0; k < 3; ++k) offset[k] += index * layout.stride[k][axis];
    }
    out[i] = cond[offset[0]] ? self[offset[1]] : other[offset[2]];
  }
}

}  // namespace

void where_cuda(const KernelContext& ctx) {
  const std::int64_t count = ctx.out.numel();
  if (count == 0) return;
  const WhereLayout layout = where_layout(ctx);
  cudaStream_t stream = cuda::activate(ctx.out.device()).stream();
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    where_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(
        ctx.inputs[0].data<bool>(), ctx.inputs[1].data<T>(), ctx.inputs[2].data<T>(),
        ctx.out.data<T>(), count, layout);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace mg
