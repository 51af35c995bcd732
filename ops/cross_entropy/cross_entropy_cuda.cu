// cross_entropy on CUDA: check the targets on the device (a bad one throws the
// CPU's error, and the context stays usable; the same scan counts the rows a mean divides by),
// then the row losses and, for mean and sum, their deterministic sum: one block per row finds the row's max and sum of exp (block
// reductions in a fixed order), thread 0 writes the row's loss; for mean and sum one block
// then adds the row losses in double, in a fixed tree. No atomics: the same bits on every run.
//   N rows, V classes; logits [N, V], targets [N] -> per_row [N] or losses [N] -> out []
#include <algorithm>
#include <cmath>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "cross_entropy/cross_entropy.h"
#include "cross_entropy/cross_entropy_cuda.cuh"
#include "cross_entropy/cross_entropy_row.cuh"
#include "minigraph/op.h"

namespace mg::cuda {

namespace {

template <typename T, typename Id>
__global__ void cross_entropy_rows_kernel(const T* __restrict__ logits,
                                          const Id* __restrict__ targets, std::int64_t rows,
                                          std::int64_t classes, std::int64_t ignore_index,
                                          T* __restrict__ per_row, double* __restrict__ losses) {
  __shared__ T max_scratch[32];
  __shared__ double sum_scratch[32];
  for (std::int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    const auto t = static_cast<std::int64_t>(targets[i]);
    double loss = 0;
    if (t != ignore_index) {                // the same branch for the whole block
      const T* row = logits + i * classes;  // (V,)
      const RowSoftmax<T> s = block_row_softmax(row, classes, max_scratch, sum_scratch);
      // (max - row[t]) + log(sum): the difference of two large logits is exact.
      loss = (static_cast<double>(s.max) - static_cast<double>(row[t])) + log(s.sum_exp);
    }
    if (threadIdx.x == 0) {
      if (per_row != nullptr)
        per_row[i] = static_cast<T>(loss);
      else
        losses[i] = loss;
    }
  }
}

template <typename T>
__global__ void reduce_row_losses_kernel(const double* __restrict__ losses, std::int64_t rows,
                                         bool mean, std::int64_t counted, T* __restrict__ out) {
  __shared__ double scratch[32];
  double total = 0;
  for (std::int64_t i = threadIdx.x; i < rows; i += blockDim.x) total += losses[i];
  total = block_reduce(total, SumOp{}, scratch);
  if (threadIdx.x == 0) {
    // PyTorch's mean over no counted row: 0 / 0, NaN.
    if (mean) total = counted == 0 ? NAN : total / static_cast<double>(counted);
    out[0] = static_cast<T>(total);
  }
}

}  // namespace

template <typename T, typename Id>
void cross_entropy_rows(const T* logits, const Id* targets, std::int64_t rows, std::int64_t classes,
                        std::int64_t ignore_index, T* per_row, double* losses,
                        cudaStream_t stream) {
  if (rows == 0) return;
  cross_entropy_rows_kernel<<<blocks_for(rows, 1), threads_for_row(classes), 0, stream>>>(
      logits, targets, rows, classes, ignore_index, per_row, losses);
  MG_CUDA_CHECK(cudaGetLastError());
}

template <typename T>
void reduce_row_losses(const double* losses, std::int64_t rows, bool mean, std::int64_t counted,
                       T* out, cudaStream_t stream) {
  reduce_row_losses_kernel<<<1, kThreadsPerBlock, 0, stream>>>(losses, rows, mean, counted, out);
  MG_CUDA_CHECK(cudaGetLastError());
}

#define MG_INSTANTIATE(T, Id)                                                              \
  template void cross_entropy_rows<T, Id>(const T*, const Id*, std::int64_t, std::int64_t, \
                                          std::int64_t, T*, double*, cudaStream_t);
MG_INSTANTIATE(float, std::int32_t)
MG_INSTANTIATE(float, std::int64_t)
MG_INSTANTIATE(double, std::int32_t)
MG_INSTANTIATE(double, std::int64_t)
#undef MG_INSTANTIATE
template void reduce_row_losses<float>(const double*, std::int64_t, bool, std::int64_t, float*,
                                       cudaStream_t);
template void reduce_row_losses<double>(const double*, std::int64_t, bool, std::int64_t, double*,
                                        cudaStream_t);

}  // namespace mg::cuda

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
