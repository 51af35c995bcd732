// sum_to on CUDA, the host side: x's axes as kept (in out) or summed away (reduce_layout,
// common/broadcast_layout.h, from x's own strides: views are read as they are), then the
// deterministic reduction (sum_to_cuda.cu).
#include "sum_to/sum_to_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "minigraph/op.h"
#include "sum_to/sum_to_kernels.h"

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
