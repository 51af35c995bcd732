// The optimizer update engine on CUDA: a grid-stride loop applying the functor to kArity
// inputs.
//   N elements; in0 [N], in1 [N] (, in2 [N]) -> out [N]
// No __restrict__: out may be the same memory as an input (apply_op_into over the state or
// the parameter). Each thread reads its elements before writing them, and no other thread
// touches them.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "update/update_kernels.h"

namespace mg {

namespace {

using cuda::global_stride;
using cuda::global_thread;

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

}  // namespace

template <template <typename> class Fn>
void update_cuda(const KernelContext& ctx) {
  Tensor& out = ctx.out;
  const std::int64_t count = out.numel();
  if (count == 0) return;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  const unsigned int blocks = cuda::blocks_for(count);
  dispatch_float(out.dtype(), [&]<typename T>() {
    const Fn<T> fn = Fn<T>::from(ctx.attrs);
    const T* a = ctx.inputs[0].data<T>();
    const T* b = ctx.inputs[1].data<T>();
    if constexpr (Fn<T>::kArity == 3) {
      update3_kernel<<<blocks, cuda::kThreadsPerBlock, 0, stream>>>(a, b, ctx.inputs[2].data<T>(),
                                                                    out.data<T>(), count, fn);
    } else {
      update2_kernel<<<blocks, cuda::kThreadsPerBlock, 0, stream>>>(a, b, out.data<T>(), count, fn);
    }
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

#define MG_INSTANTIATE(Fn) template void update_cuda<Fn>(const KernelContext&);
MG_UPDATE_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
