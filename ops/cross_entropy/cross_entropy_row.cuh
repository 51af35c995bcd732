// Device helpers shared by the CUDA kernels of cross_entropy and cross_entropy_backward: one
// block walks one row of logits (common/block_reduce.cuh).
#pragma once

#include <cuda_runtime.h>

#include <cmath>
#include <cstdint>

#include "common/block_reduce.cuh"

namespace mg::cuda {

// softmax(row)_v = exp(row[v] - max) / sum_exp over the row's `classes` logits (classes >= 1),
// computed by the whole block; sum_exp adds up in double, as on the CPU.
template <typename T>
struct RowSoftmax {
  T max;
  double sum_exp;
};

template <typename T>
__device__ RowSoftmax<T> block_row_softmax(const T* __restrict__ row, std::int64_t classes,
                                           T* max_scratch, double* sum_scratch) {
  T max = -INFINITY;
  for (std::int64_t v = threadIdx.x; v < classes; v += blockDim.x) max = MaxOp{}(max, row[v]);
  max = block_reduce(max, MaxOp{}, max_scratch);
  double sum_exp = 0;
  for (std::int64_t v = threadIdx.x; v < classes; v += blockDim.x)
    sum_exp += static_cast<double>(device_exp(row[v] - max));
  sum_exp = block_reduce(sum_exp, SumOp{}, sum_scratch);
  return {max, sum_exp};
}

}  // namespace mg::cuda
