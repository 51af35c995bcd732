// sum_to on CUDA: x's axes as kept (in out) or summed away (reduce_layout,
// common/broadcast_layout.h, from x's own strides: views are read as they are), then the
// deterministic reduction, without atomics.
//   x [..X] -> out [S]; J = out elements (kept), R = elements summed into each (reduced)
// Many outputs (the [B, T, D] -> [T, D] of the position gradient): one thread per output walks
// its R elements; neighbouring threads read neighbouring addresses. Few outputs with long sums
// (sum(logits) over B*T*V): each output's R elements are cut into chunks, each chunk summed by
// a block (per-thread strided sums, then a fixed tree), and the chunk sums added in order.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/broadcast_layout.h"
#include "minigraph/op.h"
#include "sum_to/sum_to_kernels.h"

namespace mg::cuda {

namespace {

constexpr std::int64_t kManyOutputs = 16384;  // enough threads to fill a GPU at one per output
constexpr std::int64_t kShortSum = 32;        // too short to share among a block's threads
constexpr std::int64_t kItemsPerChunk = 4096;
constexpr std::int64_t kTargetBlocks = 2048;

bool one_thread_per_output(const ReduceLayout& layout) {
  return layout.kept.count >= kManyOutputs || layout.reduced.count <= kShortSum;
}

// Chunks per output in the block path: long sums split until the grid has ~kTargetBlocks.
std::int64_t chunks_per_output(const ReduceLayout& layout) {
  const std::int64_t wanted = (layout.reduced.count + kItemsPerChunk - 1) / kItemsPerChunk;
  const std::int64_t room = std::max<std::int64_t>(1, kTargetBlocks / layout.kept.count);
  return std::clamp<std::int64_t>(wanted, 1, room);
}

__device__ std::int64_t offset_of(const AxisGroup& group, std::int64_t index) {
  std::int64_t offset = 0;
  for (int axis = group.rank - 1; axis > 0; --axis) {
    const std::int64_t outer = index / group.size[axis];
    offset += (index - outer * group.size[axis]) * group.stride[axis];
    index = outer;
  }
  return offset + index * group.stride[0];
}

template <typename T>
__global__ void sum_per_thread_kernel(const T* __restrict__ x, T* __restrict__ out,
                                      ReduceLayout layout) {
  for (std::int64_t j = global_thread(); j < layout.kept.count; j += global_stride()) {
    const T* base = x + offset_of(layout.kept, j);
    T sum = 0;
    for (std::int64_t r = 0; r < layout.reduced.count; ++r)
      sum += base[offset_of(layout.reduced, r)];
    out[j] = sum;
  }
}

// dst[j * chunks + c] = sum of chunk c of output j's elements.
template <typename T>
__global__ void sum_chunks_kernel(const T* __restrict__ x, ReduceLayout layout, std::int64_t chunks,
                                  T* __restrict__ dst) {
  __shared__ T partial[kThreadsPerBlock];
  const std::int64_t chunk_length = (layout.reduced.count + chunks - 1) / chunks;
  for (std::int64_t item = blockIdx.x; item < layout.kept.count * chunks; item += gridDim.x) {
    const std::int64_t j = item / chunks, c = item - j * chunks;
    const T* base = x + offset_of(layout.kept, j);
    const std::int64_t first = c * chunk_length;
    const std::int64_t end = first + chunk_length;
    const std::int64_t last = end < layout.reduced.count ? end : layout.reduced.count;
    T sum = 0;
    for (std::int64_t r = first + threadIdx.x; r < last; r += blockDim.x) {
      sum += base[offset_of(layout.reduced, r)];
    }
    partial[threadIdx.x] = sum;
    __syncthreads();
    for (unsigned int half = blockDim.x / 2; half > 0; half /= 2) {
      if (threadIdx.x < half) partial[threadIdx.x] += partial[threadIdx.x + half];
      __syncthreads();
    }
    if (threadIdx.x == 0) dst[item] = partial[0];
    __syncthreads();  // partial[0] is read before the next item overwrites it
  }
}

template <typename T>
__global__ void sum_chunk_sums_kernel(const T* __restrict__ chunk_sums, std::int64_t outputs,
                                      std::int64_t chunks, T* __restrict__ out) {
  for (std::int64_t j = global_thread(); j < outputs; j += global_stride()) {
    T sum = 0;
    for (std::int64_t c = 0; c < chunks; ++c) sum += chunk_sums[j * chunks + c];
    out[j] = sum;
  }
}

}  // namespace

std::size_t sum_to_scratch_bytes(const ReduceLayout& layout, std::size_t element_size) {
  if (one_thread_per_output(layout)) return 0;
  const std::int64_t chunks = chunks_per_output(layout);
  return chunks == 1 ? 0 : static_cast<std::size_t>(layout.kept.count * chunks) * element_size;
}

template <typename T>
void sum_to_launch(const T* x, T* out, const ReduceLayout& layout, void* scratch,
                   cudaStream_t stream) {
  if (one_thread_per_output(layout)) {
    sum_per_thread_kernel<<<blocks_for(layout.kept.count), kThreadsPerBlock, 0, stream>>>(x, out,
                                                                                          layout);
    MG_CUDA_CHECK(cudaGetLastError());
    return;
  }
  const std::int64_t chunks = chunks_per_output(layout);
  T* chunk_sums = chunks == 1 ? out : static_cast<T*>(scratch);
  sum_chunks_kernel<<<blocks_for(layout.kept.count * chunks, 1), kThreadsPerBlock, 0, stream>>>(
      x, layout, chunks, chunk_sums);
  MG_CUDA_CHECK(cudaGetLastError());
  if (chunks == 1) return;
  sum_chunk_sums_kernel<<<blocks_for(layout.kept.count), kThreadsPerBlock, 0, stream>>>(
      chunk_sums, layout.kept.count, chunks, out);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

namespace mg {

void sum_to_cuda_into(const Tensor& x, const Tensor& out) {
  CudaBackend& backend = cuda::activate(out.device());
  if (x.numel() == 0) {
    backend.fill_zero(out.raw_data(), out.nbytes());
    return;
  }
  const ReduceLayout layout = reduce_layout("sum_to", x.shape(), x.strides(), out.shape());
  cuda::DeviceBuffer scratch(backend, cuda::sum_to_scratch_bytes(layout, dtype_size(out.dtype())));
  dispatch_float(out.dtype(), [&]<typename T>() {
    cuda::sum_to_launch(x.data_ptr<T>(), out.data<T>(), layout, scratch.data(), backend.stream());
  });
}

void sum_to_cuda(const KernelContext& ctx) { sum_to_cuda_into(ctx.inputs[0], ctx.out); }

}  // namespace mg
