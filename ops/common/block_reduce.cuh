// Block-wide reductions for kernels where one block walks one row (the losses, softmax,
// layer_norm): the same tree on every run, so the same bits.
#pragma once

#include <cuda_runtime.h>

#include <cmath>

namespace mg::cuda {

__device__ inline float device_exp(float x) { return expf(x); }
__device__ inline double device_exp(double x) { return exp(x); }

struct MaxOp {
  template <typename V>
  __device__ V operator()(V a, V b) const {
    return b > a ? b : a;
  }
};
struct SumOp {
  template <typename V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};

// The reduction of every thread's `value` over the block (blockDim.x a multiple of 32, at most
// 1024), returned to all threads. Shuffles within each warp, then thread 0 combines the warps
// in warp order: the same tree on every run, so the same bits. `scratch` holds 32 values;
// every thread of the block must call it.
template <typename V, typename Op>
__device__ V block_reduce(V value, Op op, V* scratch) {
  for (int offset = 16; offset > 0; offset /= 2)
    value = op(value, __shfl_down_sync(0xffffffffu, value, offset));
  const unsigned int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  if (threadIdx.x == 0) {
    V total = scratch[0];
    for (unsigned int w = 1; w < blockDim.x / 32; ++w) total = op(total, scratch[w]);
    scratch[0] = total;
  }
  __syncthreads();
  const V result = scratch[0];
  __syncthreads();  // the next call may overwrite scratch only once everyone has read it
  return result;
}

}  // namespace mg::cuda
