// squared_norm on CUDA: scratch for the chunk sums from the backend's pool, then
// the deterministic two-pass sum of squares over the CPU kernel's chunks, without atomics.
//   N elements, K elements per chunk, C = ceil(N / K); x [N] -> partial [C] (double) -> out []
// 1. One block per chunk (grid-stride over chunks): thread t sums x[c K + t + j B]^2 in double
//    for j = 0, 1, ... (B threads), then the block adds its threads' sums as a fixed tree.
// 2. One block adds the chunk sums the same way and writes out in x's type.
// Every sum runs in an order fixed by N alone, so the bits do not depend on the GPU or on how
// the blocks are scheduled.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "minigraph/op.h"
#include "squared_norm/squared_norm.h"
#include "squared_norm/squared_norm_chunks.h"

namespace mg::cuda {

namespace {

// The tree over the block's B = kThreadsPerBlock sums in `shared`; the total ends in shared[0].
__device__ void block_tree_sum(double* shared) {
  for (int stride = kThreadsPerBlock / 2; stride > 0; stride /= 2) {
    __syncthreads();
    if (static_cast<int>(threadIdx.x) < stride) shared[threadIdx.x] += shared[threadIdx.x + stride];
  }
  __syncthreads();
}

template <typename T>
__global__ void chunk_sums_kernel(const T* __restrict__ x, std::int64_t count, std::int64_t chunk,
                                  std::int64_t chunks, double* __restrict__ partial) {
  __shared__ double shared[kThreadsPerBlock];
  for (std::int64_t c = blockIdx.x; c < chunks; c += gridDim.x) {
    const std::int64_t begin = c * chunk;
    const std::int64_t end = begin + chunk < count ? begin + chunk : count;
    double sum = 0;
    for (std::int64_t i = begin + threadIdx.x; i < end; i += blockDim.x) {
      const double v = static_cast<double>(x[i]);
      sum += v * v;
    }
    shared[threadIdx.x] = sum;
    block_tree_sum(shared);
    if (threadIdx.x == 0) partial[c] = shared[0];
    __syncthreads();  // shared[0] is read before the next chunk overwrites it
  }
}

template <typename T>
__global__ void total_kernel(const double* __restrict__ partial, std::int64_t chunks,
                             T* __restrict__ out) {
  __shared__ double shared[kThreadsPerBlock];
  double sum = 0;
  for (std::int64_t c = threadIdx.x; c < chunks; c += blockDim.x) sum += partial[c];
  shared[threadIdx.x] = sum;
  block_tree_sum(shared);
  if (threadIdx.x == 0) *out = static_cast<T>(shared[0]);
}

}  // namespace

std::size_t squared_norm_scratch_bytes(std::int64_t chunks) {
  // At least one double: the pool is not asked for zero bytes.
  return sizeof(double) * static_cast<std::size_t>(chunks > 0 ? chunks : 1);
}

template <typename T>
void squared_norm_launch(const T* x, std::int64_t count, std::int64_t chunk, T* out, void* scratch,
                         cudaStream_t stream) {
  const std::int64_t chunks = (count + chunk - 1) / chunk;
  auto* partial = static_cast<double*>(scratch);
  if (chunks > 0) {
    chunk_sums_kernel<T>
        <<<blocks_for(chunks, 1), kThreadsPerBlock, 0, stream>>>(x, count, chunk, chunks, partial);
    MG_CUDA_CHECK(cudaGetLastError());
  }
  total_kernel<T><<<1, kThreadsPerBlock, 0, stream>>>(partial, chunks, out);  // 0 for no chunks
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

namespace mg {

void squared_norm_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];  // [N]
  CudaBackend& backend = cuda::activate(ctx.out.device());
  const std::int64_t n = x.numel();
  cuda::DeviceBuffer scratch(backend, cuda::squared_norm_scratch_bytes(squared_norm_chunks(n)));
  dispatch_float(x.dtype(), [&]<typename T>() {
    cuda::squared_norm_launch(x.data<T>(), n, kSquaredNormChunk, ctx.out.data<T>(), scratch.data(),
                              backend.stream());
  });
}

}  // namespace mg
