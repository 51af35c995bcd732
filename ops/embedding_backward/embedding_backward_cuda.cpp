// embedding_backward on CUDA, the host side: check the ids on the device (the CPU's error for
// an out-of-range id), zero the gradient table, then the deterministic sorted scatter-add
// (embedding_backward_cuda.cu) with scratch from the backend's pool.
#include "embedding_backward/embedding_backward_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"

namespace mg {

void embedding_backward_cuda(const KernelContext& ctx) {
  const Tensor& grad = ctx.inputs[0];  // [..., D]
  const Tensor& ids = ctx.inputs[1];   // [...]
  const std::int64_t rows = ctx.out.size(0), width = ctx.out.size(1), count = ids.numel();
  CudaBackend& backend = cuda::activate(ctx.out.device());
  if (auto bad = cuda::first_bad_id(ids, rows)) {
    throw_bad_id("embedding_backward", bad->id, bad->position, ids.shape(), rows);
  }
  backend.fill_zero(ctx.out.raw_data(), ctx.out.nbytes());
  if (count == 0 || width == 0) return;
  cuda::DeviceBuffer scratch(
      backend, cuda::scatter_add_scratch_bytes(count, rows, width, dtype_size(grad.dtype())));
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      cuda::scatter_add_rows(grad.data<T>(), ids.data<Id>(), ctx.out.data<T>(), count, rows, width,
                             scratch.data(), backend.stream());
    });
  });
}

}  // namespace mg
