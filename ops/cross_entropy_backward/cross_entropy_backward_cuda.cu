// cross_entropy_backward on CUDA: one block per row finds the row's max and sum of exp (block
// reductions in a fixed order), then writes the row's softmax minus its one-hot target, scaled
// by its upstream gradient. Every output element is written by one thread: no atomics.
//   N rows, V classes; logits [N, V], targets [N], grad_out [N] or [1] -> dlogits [N, V]
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "cross_entropy/cross_entropy_row.cuh"
#include "cross_entropy_backward/cross_entropy_backward_cuda.cuh"

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

#define MG_INSTANTIATE(T, Id)                                                                    \
  template void cross_entropy_backward_rows<T, Id>(const T*, const Id*, const T*, bool, double,  \
                                                   std::int64_t, std::int64_t, std::int64_t, T*, \
                                                   cudaStream_t);
MG_INSTANTIATE(float, std::int32_t)
MG_INSTANTIATE(float, std::int64_t)
MG_INSTANTIATE(double, std::int32_t)
MG_INSTANTIATE(double, std::int64_t)
#undef MG_INSTANTIATE

}  // namespace mg::cuda
