// cross_entropy on CUDA: one block per row finds the row's max and sum of exp (block
// reductions in a fixed order), thread 0 writes the row's loss; for mean and sum one block
// then adds the row losses in double, in a fixed tree. No atomics: the same bits on every run.
//   N rows, V classes; logits [N, V], targets [N] -> per_row [N] or losses [N] -> out []
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "cross_entropy/cross_entropy_cuda.cuh"
#include "cross_entropy/cross_entropy_row.cuh"

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
