// cross_entropy on CUDA, the host side: check the targets on the device (a bad one throws the
// CPU's error, and the context stays usable; the same scan counts the rows a mean divides by),
// then the row losses and, for mean and sum, their deterministic sum (cross_entropy_cuda.cu).
#include "cross_entropy/cross_entropy_cuda.cuh"

#include <algorithm>

#include "backends/cuda/cuda_backend.h"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "cross_entropy/cross_entropy.h"
#include "minigraph/op.h"

namespace mg {

void cross_entropy_cuda(const KernelContext& ctx) {
  const Tensor& logits = ctx.inputs[0];   // [..., V]
  const Tensor& targets = ctx.inputs[1];  // [...]
  const auto& options = ctx.attrs_as<CrossEntropyOptions>();
  const std::int64_t classes = logits.shape().back(), rows = targets.numel();
  CudaBackend& backend = cuda::activate(ctx.out.device());
  const cuda::TargetScan scan = cuda::scan_targets(targets, classes, options.ignore_index);
  if (scan.bad) {
    throw_bad_target("cross_entropy", scan.bad->id, scan.bad->position, targets.shape(), classes,
                     options.ignore_index);
  }
  const bool per_row = options.reduction == Reduction::none;
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      if (per_row) {
        cuda::cross_entropy_rows(logits.data<T>(), targets.data<Id>(), rows, classes,
                                 options.ignore_index, ctx.out.data<T>(), nullptr,
                                 backend.stream());
        return;
      }
      cuda::DeviceBuffer losses(backend, static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) *
                                             sizeof(double));  // (N,)
      cuda::cross_entropy_rows(logits.data<T>(), targets.data<Id>(), rows, classes,
                               options.ignore_index, static_cast<T*>(nullptr), losses.as<double>(),
                               backend.stream());
      cuda::reduce_row_losses(losses.as<double>(), rows, options.reduction == Reduction::mean,
                              scan.counted, ctx.out.data<T>(), backend.stream());
    });
  });
}

}  // namespace mg
