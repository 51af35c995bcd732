// linear_cross_entropy on CUDA, the row step between the GEMMs: one block per row of a chunk's
// logits finds the row's max and sum of exp (block reductions in a fixed order, as
// cross_entropy's), thread 0 writes the row's loss, and the block overwrites the row with its
// gradient (softmax - onehot) * scale. Each element is read and then written by the same
// thread after the reductions: in place without a race, and no atomics.
//   R rows of the chunk, V vocabulary; logits [R, V] -> dlogits [R, V] in place, losses [R]
#include <cmath>

#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "cross_entropy/cross_entropy_row.cuh"
#include "linear_cross_entropy/linear_cross_entropy_cuda.cuh"

namespace mg::cuda {

namespace {

template <typename T, typename Id>
__global__ void linear_cross_entropy_rows_kernel(T* logits, const Id* __restrict__ targets,
                                                 std::int64_t rows, std::int64_t vocab,
                                                 std::int64_t ignore_index, bool gradients,
                                                 double scale, double* __restrict__ losses) {
  __shared__ T max_scratch[32];
  __shared__ double sum_scratch[32];
  for (std::int64_t i = blockIdx.x; i < rows; i += gridDim.x) {
    T* row = logits + i * vocab;  // (V,)
    const auto t = static_cast<std::int64_t>(targets[i]);
    if (t == ignore_index) {  // the same branch for the whole block
      if (threadIdx.x == 0) losses[i] = 0;
      if (gradients)
        for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) row[v] = T(0);
      continue;
    }
    const RowSoftmax<T> s = block_row_softmax(row, vocab, max_scratch, sum_scratch);
    const T target_logit = row[t];
    if (threadIdx.x == 0)
      losses[i] = (static_cast<double>(s.max) - static_cast<double>(target_logit)) + log(s.sum_exp);
    if (!gradients) continue;
    __syncthreads();  // every thread has read row[t] before its owner overwrites it
    const T factor = static_cast<T>(scale / s.sum_exp);
    const T step = static_cast<T>(scale);
    for (std::int64_t v = threadIdx.x; v < vocab; v += blockDim.x) {
      const T p = device_exp(row[v] - s.max) * factor;
      row[v] = v == t ? p - step : p;
    }
  }
}

}  // namespace

template <typename T, typename Id>
void linear_cross_entropy_rows(T* logits, const Id* targets, std::int64_t rows, std::int64_t vocab,
                               std::int64_t ignore_index, bool gradients, double scale,
                               double* losses, cudaStream_t stream) {
  if (rows == 0) return;
  linear_cross_entropy_rows_kernel<<<blocks_for(rows, 1), threads_for_row(vocab), 0, stream>>>(
      logits, targets, rows, vocab, ignore_index, gradients, scale, losses);
  MG_CUDA_CHECK(cudaGetLastError());
}

#define MG_INSTANTIATE(T, Id)                                                               \
  template void linear_cross_entropy_rows<T, Id>(T*, const Id*, std::int64_t, std::int64_t, \
                                                 std::int64_t, bool, double, double*,       \
                                                 cudaStream_t);
MG_INSTANTIATE(float, std::int32_t)
MG_INSTANTIATE(float, std::int64_t)
MG_INSTANTIATE(double, std::int32_t)
MG_INSTANTIATE(double, std::int64_t)
#undef MG_INSTANTIATE

}  // namespace mg::cuda
