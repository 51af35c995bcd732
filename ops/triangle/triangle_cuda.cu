// The triangle rows on CUDA: one thread per element in a grid-stride loop, neighbouring threads
// on neighbouring columns of a row (coalesced), each writing x or 0.
//   x [M, R, C] -> out [M, R, C]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "triangle/triangle_kernels.h"

namespace mg {

namespace {

template <bool Upper, typename T>
__global__ void triangle_kernel(const T* __restrict__ x, T* __restrict__ out, std::int64_t numel,
                                TriangleGeometry g) {
  for (std::int64_t k = cuda::global_thread(); k < numel; k += cuda::global_stride()) {
    const std::int64_t c = k % g.cols, r = k / g.cols % g.rows;
    out[k] = triangle_keeps<Upper>(c - r, g.diagonal) ? x[k] : T(0);
  }
}

}  // namespace

template <bool Upper>
void triangle_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const TriangleGeometry g = triangle_geometry(x.shape(), ctx.attrs);
  if (x.numel() == 0) return;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    triangle_kernel<Upper><<<cuda::blocks_for(x.numel()), cuda::kThreadsPerBlock, 0, stream>>>(
        x.data<T>(), ctx.out.data<T>(), x.numel(), g);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

template void triangle_cuda<false>(const KernelContext&);
template void triangle_cuda<true>(const KernelContext&);

}  // namespace mg
