// The CUDA engine of the elementwise unary ops, host side: picks the element type and the
// stream, builds the functor (common/unary_functor.h) and queues unary_launch, which each op's
// .cu instantiates for its functor with MG_INSTANTIATE_UNARY (common/unary_cuda.cuh).
//   N elements; x [N] -> out [N]
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/cuda_backend.h"
#include "common/broadcast_layout.h"
#include "minigraph/layout.h"
#include "minigraph/op.h"

namespace mg::cuda {

// out[i] = fn(x[i]) for i in [0, count), queued on `stream`; x and out may be the same memory.
// T: float or double; Fn: a functor of common/unary_functor.h over T.
template <typename T, typename Fn>
void unary_launch(const T* x, T* out, std::int64_t count, Fn fn, cudaStream_t stream);
// The same for x a view: read at the offsets `layout` gives (its stride_a).
template <typename T, typename Fn>
void unary_strided_launch(const T* x, T* out, std::int64_t count, const BroadcastLayout& layout,
                          Fn fn, cudaStream_t stream);

}  // namespace mg::cuda

namespace mg {

// The kernel of a unary op on CUDA: out = fn(x) with fn = make.template operator()<T>() for
// the dtype's T, as unary_cpu (common/unary.h) on the CPU.
template <typename Make>
void unary_cuda(const KernelContext& ctx, Make&& make) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(out.dtype(), [&]<typename T>() {
    if (x.is_contiguous()) {
      cuda::unary_launch(x.data<T>(), out.data<T>(), out.numel(), make.template operator()<T>(),
                         stream);
      return;
    }
    // A view (unary_op's takes_layout: at most kMaxBroadcastGroups axes): x's strides as the
    // first input of a one-input broadcast to its own shape.
    const BroadcastLayout layout = broadcast_layout(ctx.op.name, x.shape(), x.strides(), x.shape(),
                                                    contiguous_strides(x.shape()), x.shape(), "x");
    cuda::unary_strided_launch(x.data_ptr<T>(), out.data<T>(), out.numel(), layout,
                               make.template operator()<T>(), stream);
  });
}

// The same for a functor without state: unary_cuda<NegFn>(ctx).
template <template <typename> class Fn>
void unary_cuda(const KernelContext& ctx) {
  unary_cuda(ctx, []<typename T>() { return Fn<T>{}; });
}

}  // namespace mg
