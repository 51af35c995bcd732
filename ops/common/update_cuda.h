// The CUDA engine of the optimizer update ops, host side: picks the element type and the
// stream, builds the functor and queues update_launch, which each op's .cu instantiates for
// its functor with MG_INSTANTIATE_UPDATE (common/update_cuda.cuh). As update_cpu
// (common/update.h) on the CPU.
//   N elements; a [N], b [N] (, c [N]) -> out [N]
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"

namespace mg::cuda {

// out[i] = fn(a[i], b[i]) for i in [0, count) when c is null, else fn(a[i], b[i], c[i]);
// queued on `stream`. out may be the same memory as any input.
template <typename T, typename Fn>
void update_launch(const T* a, const T* b, const T* c, T* out, std::int64_t count, Fn fn,
                   cudaStream_t stream);

}  // namespace mg::cuda

namespace mg {

template <typename Make>
void update_cuda(const KernelContext& ctx, Make&& make) {
  Tensor& out = ctx.out;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(out.dtype(), [&]<typename T>() {
    const T* c = ctx.inputs.size() > 2 ? ctx.inputs[2].data<T>() : nullptr;
    cuda::update_launch(ctx.inputs[0].data<T>(), ctx.inputs[1].data<T>(), c, out.data<T>(),
                        out.numel(), make.template operator()<T>(), stream);
  });
}

}  // namespace mg
