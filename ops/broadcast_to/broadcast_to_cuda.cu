// broadcast_to on CUDA: the shared broadcast layout of x to out (size-1 axes dropped, contiguous
// axes merged, common/broadcast_layout.h); each output element maps to its x element through
// mixed-radix sizes and x's strides (0 on repeated axes), a grid-stride loop writing every
// output element once.
//   N out elements; x [..X] -> out [S]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/broadcast_layout.cuh"
#include "minigraph/op.h"

namespace mg::cuda {

namespace {

template <typename T>
__global__ void broadcast_to_kernel(const T* __restrict__ x, T* __restrict__ out,
                                    std::int64_t count, BroadcastLayout layout) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = x[layout_offset(i, layout, layout.stride_a)];
  }
}

}  // namespace

template <typename T>
void broadcast_to_launch(const T* x, T* out, std::int64_t count, const BroadcastLayout& layout,
                         cudaStream_t stream) {
  if (count == 0) return;
  broadcast_to_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(x, out, count, layout);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

namespace mg {

void broadcast_to_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  const auto layout =
      broadcast_layout("broadcast_to", x.shape(), out.shape(), out.shape(), "shape");
  dispatch_float(out.dtype(), [&]<typename T>() {
    cuda::broadcast_to_launch(x.data<T>(), out.data<T>(), out.numel(), layout, stream);
  });
}

}  // namespace mg
