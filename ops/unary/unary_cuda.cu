// The unary elementwise engine on CUDA: a grid-stride loop applying the functor, with 16-byte
// loads when the sizes and addresses allow; a view (up to kMaxBroadcastGroups merged axes, the
// family's takes_layout) is read through its strides.
//   N elements; x [N] (or a view of N elements) -> out [N]
// No __restrict__: x and out may be the same memory (apply_op_into over the input). Each
// thread reads its elements before writing them, and no other thread touches them.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/broadcast_layout.cuh"
#include "common/broadcast_layout.h"
#include "minigraph/layout.h"
#include "unary/unary_kernels.h"

namespace mg {

namespace {

using cuda::blocks_for;
using cuda::global_stride;
using cuda::global_thread;
using cuda::kThreadsPerBlock;

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

// Element i of out reads x through layout.stride_a (x's own strides over its merged axes).
template <typename T, typename Fn>
__global__ void unary_strided_kernel(const T* x, T* out, std::int64_t count, BroadcastLayout layout,
                                     Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = fn(x[cuda::layout_offset(i, layout, layout.stride_a)]);
  }
}

template <typename T, typename Fn>
void launch_contiguous(const T* x, T* out, std::int64_t count, Fn fn, cudaStream_t stream) {
  if (cuda::vec16_ok<T>(count, x, out)) {
    using V = cuda::Vec16<T>;
    const std::int64_t vectors = count / cuda::kVecLanes<T>;
    unary_vec16_kernel<<<blocks_for(vectors), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(x), reinterpret_cast<V*>(out), vectors, fn);
  } else {
    unary_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(x, out, count, fn);
  }
}

}  // namespace

template <template <typename> class Fn>
void unary_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  const std::int64_t count = out.numel();
  if (count == 0) return;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(out.dtype(), [&]<typename T>() {
    const Fn<T> fn = make_unary_fn<Fn, T>(ctx.attrs);
    if (x.is_contiguous()) {
      launch_contiguous(x.data<T>(), out.data<T>(), count, fn, stream);
    } else {
      // x's strides as the first input of a one-input broadcast to its own shape.
      const BroadcastLayout layout =
          broadcast_layout(ctx.op.name, x.shape(), x.strides(), x.shape(),
                           contiguous_strides(x.shape()), x.shape(), "x");
      unary_strided_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(
          x.data_ptr<T>(), out.data<T>(), count, layout, fn);
    }
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

#define MG_INSTANTIATE(Fn) template void unary_cuda<Fn>(const KernelContext&);
MG_UNARY_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
