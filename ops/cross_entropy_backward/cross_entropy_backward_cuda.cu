// cross_entropy_backward on CUDA: check the targets on the device (the CPU's
// error for a bad one; the same scan counts the rows a mean divides by), then the row
// kernel: one block per row finds the row's max and sum of exp (block
// reductions in a fixed order), then writes the row's softmax minus its one-hot target, scaled
// by its upstream gradient. Every output element is written by one thread: no atomics.
//   N rows, V classes; logits [N, V], targets [N], grad_out [N] or [1] -> dlogits [N, V]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "cross_entropy/cross_entropy.h"
#include "cross_entropy/cross_entropy_row.cuh"
#include "minigraph/op.h"

namespace mg::cuda {

namespace {

template <typename T, typename Id>
__global__ void cross_entropy_backward_rows_kernel(const T* __restrict__ logits,
                                                   const Id* __restrict__ targets,
                                                   const T* __restrict__ grad_out, bool per_row,
                                                   double divisor, std::int64_t rows,
                                                   std::int64_t classes, std::int64_t ignore_index,
                                                   T* __restrict__ dlogits) {
  __shared__ T max_scratch[32];
  __shared__ double sum_scratch[32];
  for (std::int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const auto t = static_cast<std::int64_t>(targets[i]);
    T* d = dlogits + i * classes;  // (V,)
    if (t == ignore_index) {       // the same branch for the whole block
      for (std::int64_t v = threadIdx.x; v < classes; v += blockDim.x) d[v] = T(0);
      continue;
    }
    const T* row = logits + i * classes;  // (V,)
    const RowSoftmax<T> s = block_row_softmax(row, classes, max_scratch, sum_scratch);
    const double g =
        per_row ? static_cast<double>(grad_out[i]) : static_cast<double>(grad_out[0]) / divisor;
    const T scale = static_cast<T>(g);
    const T inv_sum = static_cast<T>(1.0 / s.sum_exp);
    for (std::int64_t v = threadIdx.x; v < classes; v += blockDim.x) {
      const T p = device_exp(row[v] - s.max) * inv_sum;
      d[v] = scale * (v == t ? p - T(1) : p);
    }
  }
}

}  // namespace

template <typename T, typename Id>
void cross_entropy_backward_rows(const T* logits, const Id* targets, const T* grad_out,
                                 bool per_row, double divisor, std::int64_t rows,
                                 std::int64_t classes, std::int64_t ignore_index, T* dlogits,
                                 cudaStream_t stream) {
  if (rows == 0 || classes == 0) return;
  cross_entropy_backward_rows_kernel<<<blocks_for(rows, 1), threads_for_row(classes), 0, stream>>>(
      logits, targets, grad_out, per_row, divisor, rows, classes, ignore_index, dlogits);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda

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
