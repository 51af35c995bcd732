// The CUDA engine of the elementwise unary ops, device side (nvcc only; the host side is
// common/unary_cuda.h): a grid-stride loop applying the op's functor, with 16-byte loads when
// the sizes and addresses allow. An op's .cu includes its functor's header and this one, and
// instantiates the launchers for its functor: MG_INSTANTIATE_UNARY(NegFn) in namespace mg::cuda.
//   N elements; x [N] (or a view of N elements, read through its strides) -> out [N]
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/broadcast_layout.cuh"

namespace mg::cuda {

// No __restrict__: x and out may be the same memory (apply_op_into over the input). Each
// thread reads its elements before writing them, and no other thread touches them.
template <typename T, typename Fn>
__global__ void unary_kernel(const T* x, T* out, std::int64_t count, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) out[i] = fn(x[i]);
}

// The functor on each lane of a 16-byte vector.
template <typename Fn>
__device__ inline float4 unary_lanes(const Fn& fn, float4 v) {
  return {fn(v.x), fn(v.y), fn(v.z), fn(v.w)};
}
template <typename Fn>
__device__ inline double2 unary_lanes(const Fn& fn, double2 v) {
  return {fn(v.x), fn(v.y)};
}

template <typename V, typename Fn>
__global__ void unary_vec16_kernel(const V* x, V* out, std::int64_t vectors, Fn fn) {
  for (std::int64_t i = global_thread(); i < vectors; i += global_stride()) {
    out[i] = unary_lanes(fn, x[i]);
  }
}

// x a view: element i of out reads x through layout.stride_a (x's own strides over its merged
// axes).
template <typename T, typename Fn>
__global__ void unary_strided_kernel(const T* x, T* out, std::int64_t count, BroadcastLayout layout,
                                     Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = fn(x[layout_offset(i, layout, layout.stride_a)]);
  }
}

template <typename T, typename Fn>
void unary_strided_launch(const T* x, T* out, std::int64_t count, const BroadcastLayout& layout,
                          Fn fn, cudaStream_t stream) {
  if (count == 0) return;
  unary_strided_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(x, out, count, layout,
                                                                           fn);
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T, typename Fn>
void unary_launch(const T* x, T* out, std::int64_t count, Fn fn, cudaStream_t stream) {
  if (count == 0) return;
  if (vec16_ok<T>(count, x, out)) {
    using V = Vec16<T>;
    const std::int64_t vectors = count / kVecLanes<T>;
    unary_vec16_kernel<<<blocks_for(vectors), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(x), reinterpret_cast<V*>(out), vectors, fn);
  } else {
    unary_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(x, out, count, fn);
  }
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

// The launchers of one functor template for float and double; in namespace mg::cuda.
#define MG_INSTANTIATE_UNARY(Fn)                                                                   \
  template void unary_launch<float, Fn<float>>(const float*, float*, std::int64_t, Fn<float>,      \
                                               cudaStream_t);                                      \
  template void unary_launch<double, Fn<double>>(const double*, double*, std::int64_t, Fn<double>, \
                                                 cudaStream_t);                                    \
  template void unary_strided_launch<float, Fn<float>>(                                            \
      const float*, float*, std::int64_t, const BroadcastLayout&, Fn<float>, cudaStream_t);        \
  template void unary_strided_launch<double, Fn<double>>(                                          \
      const double*, double*, std::int64_t, const BroadcastLayout&, Fn<double>, cudaStream_t);
