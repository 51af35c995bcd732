// dropout on CUDA: one thread per Philox block of four elements (a grid-stride loop over the
// blocks), running the CPU kernel's dropout_block, so both give the same mask bit for bit.
//   N elements, B = ceil(N / 4) blocks; x [N] -> out [N]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "dropout/dropout_kernels.h"

namespace mg {

namespace {

template <typename T>
__global__ void dropout_kernel(const T* __restrict__ x, T* __restrict__ out, std::int64_t n,
                               DropoutDraw draw, T scale) {
  const std::int64_t blocks = (n + 3) / 4;
  for (std::int64_t b = cuda::global_thread(); b < blocks; b += cuda::global_stride()) {
    dropout_block(draw, scale, b, x, out, n);
  }
}

}  // namespace

void dropout_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const DropoutDraw draw = dropout_draw(ctx.attrs);
  const std::int64_t n = x.numel();
  if (n == 0) return;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    const std::int64_t blocks = (n + 3) / 4;
    dropout_kernel<T><<<cuda::blocks_for(blocks), cuda::kThreadsPerBlock, 0, stream>>>(
        x.data<T>(), ctx.out.data<T>(), n, draw, static_cast<T>(draw.scale));
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace mg
