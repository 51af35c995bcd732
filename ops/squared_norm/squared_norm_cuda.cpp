// squared_norm on CUDA, the host side: scratch for the chunk sums from the backend's pool, then
// the deterministic two-pass sum (squared_norm_cuda.cu) over the CPU kernel's chunks.
#include "squared_norm/squared_norm_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"
#include "squared_norm/squared_norm.h"
#include "squared_norm/squared_norm_chunks.h"

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
