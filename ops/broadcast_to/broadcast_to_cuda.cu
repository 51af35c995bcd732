// broadcast_to on CUDA: each output element maps to its x element through mixed-radix sizes
// and x's strides (0 on repeated axes); a grid-stride loop writes every output element once.
//   N out elements; x [..X] -> out [S]
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "broadcast_to/broadcast_to_cuda.cuh"
#include "common/broadcast_layout.cuh"

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

template void broadcast_to_launch<float>(const float*, float*, std::int64_t, const BroadcastLayout&,
                                         cudaStream_t);
template void broadcast_to_launch<double>(const double*, double*, std::int64_t,
                                          const BroadcastLayout&, cudaStream_t);

}  // namespace mg::cuda
