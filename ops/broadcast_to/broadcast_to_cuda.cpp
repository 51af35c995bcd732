// broadcast_to on CUDA, the host side: the shared broadcast layout of x to out (size-1 axes
// dropped, contiguous axes merged, common/broadcast_layout.h), then one kernel writes out.
#include "broadcast_to/broadcast_to_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"

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
