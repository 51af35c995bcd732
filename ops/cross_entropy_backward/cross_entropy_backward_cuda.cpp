// cross_entropy_backward on CUDA, the host side: check the targets on the device (the CPU's
// error for a bad one; the same scan counts the rows a mean divides by), then the row kernel
// (cross_entropy_backward_cuda.cu).
#include "cross_entropy_backward/cross_entropy_backward_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "cross_entropy/cross_entropy.h"
#include "minigraph/op.h"

namespace mg {

void cross_entropy_backward_cuda(const KernelContext& ctx) {
  const Tensor& logits = ctx.inputs[0];    // [..., V]
  const Tensor& targets = ctx.inputs[1];   // [...]
  const Tensor& grad_out = ctx.inputs[2];  // [] or [...]
  const auto& options = ctx.attrs_as<CrossEntropyOptions>();
  const std::int64_t classes = logits.shape().back(), rows = targets.numel();
  CudaBackend& backend = cuda::activate(ctx.out.device());
  const cuda::TargetScan scan = cuda::scan_targets(targets, classes, options.ignore_index);
  if (scan.bad) {
    throw_bad_target("cross_entropy_backward", scan.bad->id, scan.bad->position, targets.shape(),
                     classes, options.ignore_index);
  }
  // As on the CPU: a mean divides by the counted rows (none counted: no row reads it).
  const double divisor = options.reduction == Reduction::mean && scan.counted > 0
                             ? static_cast<double>(scan.counted)
                             : 1.0;
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      cuda::cross_entropy_backward_rows(logits.data<T>(), targets.data<Id>(), grad_out.data<T>(),
                                        options.reduction == Reduction::none, divisor, rows,
                                        classes, options.ignore_index, ctx.out.data<T>(),
                                        backend.stream());
    });
  });
}

}  // namespace mg
