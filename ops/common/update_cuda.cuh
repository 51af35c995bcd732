// The CUDA engine of the optimizer update ops, device side (nvcc only; the host side is
// common/update_cuda.h): a grid-stride loop applying the op's functor to Fn::kArity inputs.
// An op's .cu includes its functor's header and this one, and instantiates the launcher:
// MG_INSTANTIATE_UPDATE(AdamWUpdateFn) in namespace mg::cuda.
//   N elements; a [N], b [N] (, c [N]) -> out [N]
#pragma once

#include <cstdint>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"

namespace mg::cuda {

// No __restrict__: out may be the same memory as an input (apply_op_into over the state or
// the parameter). Each thread reads its elements before writing them, and no other thread
// touches them.
template <typename T, typename Fn>
__global__ void update2_kernel(const T* a, const T* b, T* out, std::int64_t count, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) out[i] = fn(a[i], b[i]);
}
template <typename T, typename Fn>
__global__ void update3_kernel(const T* a, const T* b, const T* c, T* out, std::int64_t count,
                               Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = fn(a[i], b[i], c[i]);
  }
}

template <typename T, typename Fn>
void update_launch(const T* a, const T* b, const T* c, T* out, std::int64_t count, Fn fn,
                   cudaStream_t stream) {
  if (count == 0) return;
  if constexpr (Fn::kArity == 3) {
    update3_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, c, out, count, fn);
  } else {
    update2_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count, fn);
  }
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

// The launchers of one functor template for float and double; in namespace mg::cuda.
#define MG_INSTANTIATE_UPDATE(Fn)                                                                 \
  template void update_launch<float, Fn<float>>(const float*, const float*, const float*, float*, \
                                                std::int64_t, Fn<float>, cudaStream_t);           \
  template void update_launch<double, Fn<double>>(const double*, const double*, const double*,    \
                                                  double*, std::int64_t, Fn<double>,              \
                                                  cudaStream_t);
