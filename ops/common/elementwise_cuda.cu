// The binary elementwise engine on CUDA: 16-byte loads for equal shapes; for the [B, T, D] +
// [T, D] of the input layer, each thread loads its element of the repeated operand once and
// applies it to every repeat; any other broadcast maps each output index to both inputs
// through strides (BroadcastLayout). The function is a template argument of every kernel.
//   N out elements; a [..A], b [..B] -> out [broadcast(A, B)]
// No __restrict__ on the pointers: out may be one of the inputs (apply_op_into), which
// restrict would declare impossible. Each thread reads its elements before writing the same
// index, so the kernels are correct that way.
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/elementwise_cuda.cuh"

namespace mg::cuda {

namespace {

// Repeats handled by separate rows of blocks (gridDim.y): enough to fill the GPU with B = 8.
constexpr std::int64_t kMaxRepeatBlocks = 64;

// fn on each lane of a 16-byte vector, or on one element.
template <typename Fn, typename T>
__device__ T lanes(Fn fn, T x, T y) {
  return fn(x, y);
}
template <typename Fn>
__device__ float4 lanes(Fn fn, float4 x, float4 y) {
  return {fn(x.x, y.x), fn(x.y, y.y), fn(x.z, y.z), fn(x.w, y.w)};
}
template <typename Fn>
__device__ double2 lanes(Fn fn, double2 x, double2 y) {
  return {fn(x.x, y.x), fn(x.y, y.y)};
}

template <typename Element, typename Fn>
__global__ void same_shape_kernel(const Element* a, const Element* b, Element* out,
                                  std::int64_t count, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = lanes(fn, a[i], b[i]);
  }
}

template <typename Element, typename Fn>
__global__ void repeated_kernel(const Element* full, const Element* part, Element* out,
                                std::int64_t repeats, std::int64_t width, Fn fn) {
  for (std::int64_t j = global_thread(); j < width; j += global_stride()) {
    const Element p = part[j];
    for (std::int64_t r = blockIdx.y; r < repeats; r += gridDim.y) {
      out[r * width + j] = lanes(fn, full[r * width + j], p);
    }
  }
}

template <typename T, typename Fn>
__global__ void broadcast_kernel(const T* a, const T* b, T* out, std::int64_t count,
                                 BroadcastLayout layout, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    std::int64_t rest = i, offset_a = 0, offset_b = 0;
    for (int axis = layout.rank - 1; axis > 0; --axis) {
      const std::int64_t outer = rest / layout.size[axis];
      const std::int64_t index = rest - outer * layout.size[axis];
      offset_a += index * layout.stride_a[axis];
      offset_b += index * layout.stride_b[axis];
      rest = outer;
    }
    out[i] = fn(a[offset_a + rest * layout.stride_a[0]], b[offset_b + rest * layout.stride_b[0]]);
  }
}

template <typename T, typename Fn>
void launch_same_shape(const T* a, const T* b, T* out, std::int64_t count, Fn fn,
                       cudaStream_t stream) {
  if (vec16_ok<T>(count, a, b, out)) {
    using V = Vec16<T>;
    const std::int64_t vectors = count / kVecLanes<T>;
    same_shape_kernel<<<blocks_for(vectors), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(a), reinterpret_cast<const V*>(b), reinterpret_cast<V*>(out),
        vectors, fn);
  } else {
    same_shape_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count, fn);
  }
}

template <typename T, typename Fn>
void launch_repeated(const T* full, const T* part, T* out, std::int64_t repeats, std::int64_t width,
                     Fn fn, cudaStream_t stream) {
  const auto repeat_blocks = static_cast<unsigned int>(std::min(repeats, kMaxRepeatBlocks));
  if (vec16_ok<T>(width, full, part, out)) {
    using V = Vec16<T>;
    const std::int64_t vectors = width / kVecLanes<T>;
    repeated_kernel<<<dim3(blocks_for(vectors), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(full), reinterpret_cast<const V*>(part),
        reinterpret_cast<V*>(out), repeats, vectors, fn);
  } else {
    repeated_kernel<<<dim3(blocks_for(width), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        full, part, out, repeats, width, fn);
  }
}

}  // namespace

template <typename T>
void binary_same_shape(BinaryOp op, const T* a, const T* b, T* out, std::int64_t count,
                       cudaStream_t stream) {
  if (count == 0) return;
  visit_binary_op(op, [&](auto fn) { launch_same_shape(a, b, out, count, fn, stream); });
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void binary_repeated(BinaryOp op, bool full_is_a, const T* full, const T* part, T* out,
                     std::int64_t repeats, std::int64_t width, cudaStream_t stream) {
  if (repeats == 0 || width == 0) return;
  visit_binary_op(op, [&](auto fn) {
    if (full_is_a) {
      launch_repeated(full, part, out, repeats, width, fn, stream);
    } else {
      launch_repeated(full, part, out, repeats, width, Flipped<decltype(fn)>{fn}, stream);
    }
  });
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void binary_broadcast(BinaryOp op, const T* a, const T* b, T* out, std::int64_t count,
                      const BroadcastLayout& layout, cudaStream_t stream) {
  if (count == 0) return;
  visit_binary_op(op, [&](auto fn) {
    broadcast_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count, layout,
                                                                         fn);
  });
  MG_CUDA_CHECK(cudaGetLastError());
}

#define MG_INSTANTIATE(T)                                                                \
  template void binary_same_shape<T>(BinaryOp, const T*, const T*, T*, std::int64_t,     \
                                     cudaStream_t);                                      \
  template void binary_repeated<T>(BinaryOp, bool, const T*, const T*, T*, std::int64_t, \
                                   std::int64_t, cudaStream_t);                          \
  template void binary_broadcast<T>(BinaryOp, const T*, const T*, T*, std::int64_t,      \
                                    const BroadcastLayout&, cudaStream_t);
MG_INSTANTIATE(float)
MG_INSTANTIATE(double)
#undef MG_INSTANTIATE

}  // namespace mg::cuda
