// add on CUDA: elementwise with 16-byte loads for equal shapes; for the [B, T, D] + [T, D] of
// the input layer, each thread loads its element of the repeated operand once and adds it to
// every repeat; any other broadcast maps each output index to both inputs through strides.
//   N out elements; a [..A], b [..B] -> out [broadcast(A, B)]
#include "add/add_cuda.cuh"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"

namespace mg::cuda {

namespace {

// Repeats handled by separate rows of blocks (gridDim.y): enough to fill the GPU with B = 8.
constexpr std::int64_t kMaxRepeatBlocks = 64;

template <typename Element>
__global__ void add_same_shape_kernel(const Element* __restrict__ a, const Element* __restrict__ b,
                                      Element* __restrict__ out, std::int64_t count) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) out[i] = a[i] + b[i];
}

template <typename Element>
__global__ void add_repeated_kernel(const Element* __restrict__ full,
                                    const Element* __restrict__ part, Element* __restrict__ out,
                                    std::int64_t repeats, std::int64_t width) {
  for (std::int64_t j = global_thread(); j < width; j += global_stride()) {
    const Element p = part[j];
    for (std::int64_t r = blockIdx.y; r < repeats; r += gridDim.y) {
      out[r * width + j] = full[r * width + j] + p;
    }
  }
}

template <typename T>
__global__ void add_broadcast_kernel(const T* __restrict__ a, const T* __restrict__ b,
                                     T* __restrict__ out, std::int64_t count,
                                     BroadcastLayout layout) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    std::int64_t rest = i, offset_a = 0, offset_b = 0;
    for (int axis = layout.rank - 1; axis > 0; --axis) {
      const std::int64_t outer = rest / layout.size[axis];
      const std::int64_t index = rest - outer * layout.size[axis];
      offset_a += index * layout.stride_a[axis];
      offset_b += index * layout.stride_b[axis];
      rest = outer;
    }
    out[i] = a[offset_a + rest * layout.stride_a[0]] + b[offset_b + rest * layout.stride_b[0]];
  }
}

}  // namespace

template <typename T>
void add_same_shape(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream) {
  if (count == 0) return;
  if (vec16_ok<T>(count, a, b, out)) {
    using V = Vec16<T>;
    const std::int64_t vectors = count / kVecLanes<T>;
    add_same_shape_kernel<<<blocks_for(vectors), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(a), reinterpret_cast<const V*>(b), reinterpret_cast<V*>(out),
        vectors);
  } else {
    add_same_shape_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count);
  }
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void add_repeated(const T* full, const T* part, T* out, std::int64_t repeats, std::int64_t width,
                  cudaStream_t stream) {
  if (repeats == 0 || width == 0) return;
  const auto repeat_blocks = static_cast<unsigned int>(std::min(repeats, kMaxRepeatBlocks));
  if (vec16_ok<T>(width, full, part, out)) {
    using V = Vec16<T>;
    const std::int64_t vectors = width / kVecLanes<T>;
    add_repeated_kernel<<<dim3(blocks_for(vectors), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(full), reinterpret_cast<const V*>(part),
        reinterpret_cast<V*>(out), repeats, vectors);
  } else {
    add_repeated_kernel<<<dim3(blocks_for(width), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        full, part, out, repeats, width);
  }
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void add_broadcast(const T* a, const T* b, T* out, std::int64_t count,
                   const BroadcastLayout& layout, cudaStream_t stream) {
  if (count == 0) return;
  add_broadcast_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count,
                                                                           layout);
  MG_CUDA_CHECK(cudaGetLastError());
}

#define MG_INSTANTIATE(T)                                                                          \
  template void add_same_shape<T>(const T*, const T*, T*, std::int64_t, cudaStream_t);             \
  template void add_repeated<T>(const T*, const T*, T*, std::int64_t, std::int64_t, cudaStream_t); \
  template void add_broadcast<T>(const T*, const T*, T*, std::int64_t, const BroadcastLayout&,     \
                                 cudaStream_t);
MG_INSTANTIATE(float)
MG_INSTANTIATE(double)
#undef MG_INSTANTIATE

}  // namespace mg::cuda
