// embedding on CUDA, the host side: check the ids on the device (an out-of-range id throws the
// CPU's error, and the context stays usable), then launch the row gather (embedding_cuda.cu).
#include "embedding/embedding_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"

namespace mg {

void embedding_cuda(const KernelContext& ctx) {
  const Tensor& table = ctx.inputs[0];  // [V, D]
  const Tensor& ids = ctx.inputs[1];    // [...]
  const std::int64_t rows = table.size(0);
  CudaBackend& backend = cuda::activate(ctx.out.device());
  if (auto bad = cuda::first_bad_id(ids, rows)) {
    throw_bad_id("embedding", bad->id, bad->position, ids.shape(), rows);
  }
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      cuda::gather_rows(table.data<T>(), ids.data<Id>(), ctx.out.data<T>(), ids.numel(),
                        table.size(1), backend.stream());
    });
  });
}

}  // namespace mg
