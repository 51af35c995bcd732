// The softmax rows on CUDA. Contiguous rows (dim the last axis): one block per row, its
// threads striding along it, reduced with block_reduce (the same tree every run). Strided rows
// (another dim): one thread per row, neighbouring threads reading neighbouring elements.
//   R rows of N; x or (grad_out, result) [R rows of N] -> out [R rows of N]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/block_reduce.cuh"
#include "softmax/softmax_kernels.h"

namespace mg {

namespace {

using cuda::block_reduce;
using cuda::device_exp;
using cuda::MaxOp;
using cuda::SumOp;

__device__ inline float device_log(float x) { return logf(x); }
__device__ inline double device_log(double x) { return log(x); }

// max, then sum(exp(x - max)), then the row written; a row of -inf only is zeros (or -inf).
template <bool Log, typename T>
__global__ void forward_rows_kernel(const T* __restrict__ x, T* __restrict__ y, std::int64_t rows,
                                    std::int64_t n) {
  __shared__ T scratch[32];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const T* row = x + r * n;
    T* out = y + r * n;
    T max = -INFINITY;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) max = MaxOp{}(max, row[j]);
    max = block_reduce(max, MaxOp{}, scratch);
    if (max == -INFINITY) {  // the same on every thread of the block
      for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) out[j] = Log ? -INFINITY : T(0);
      continue;
    }
    T sum = 0;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) sum += device_exp(row[j] - max);
    sum = block_reduce(sum, SumOp{}, scratch);
    const T log_sum = device_log(sum), inv = T(1) / sum;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      out[j] = Log ? (row[j] - max) - log_sum : device_exp(row[j] - max) * inv;
    }
  }
}

template <bool Log, typename T>
__global__ void backward_rows_kernel(const T* __restrict__ g, const T* __restrict__ y,
                                     T* __restrict__ dx, std::int64_t rows, std::int64_t n) {
  __shared__ T scratch[32];
  for (std::int64_t r = blockIdx.x; r < rows; r += gridDim.x) {
    const std::int64_t at = r * n;
    T total = 0;
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      total += Log ? g[at + j] : g[at + j] * y[at + j];
    }
    total = block_reduce(total, SumOp{}, scratch);
    for (std::int64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const std::int64_t k = at + j;
      dx[k] = Log ? g[k] - device_exp(y[k]) * total : y[k] * (g[k] - total);
    }
  }
}

template <bool Log, typename T>
__global__ void forward_strided_kernel(const T* __restrict__ x, T* __restrict__ y,
                                       AxisRows rows) {
  const std::int64_t s = rows.inner;
  for (std::int64_t r = cuda::global_thread(); r < rows.count(); r += cuda::global_stride()) {
    const std::int64_t at = rows.start(r);
    T max = -INFINITY;
    for (std::int64_t j = 0; j < rows.n; ++j) max = MaxOp{}(max, x[at + j * s]);
    if (max == -INFINITY) {
      for (std::int64_t j = 0; j < rows.n; ++j) y[at + j * s] = Log ? -INFINITY : T(0);
      continue;
    }
    T sum = 0;
    for (std::int64_t j = 0; j < rows.n; ++j) sum += device_exp(x[at + j * s] - max);
    const T log_sum = device_log(sum), inv = T(1) / sum;
    for (std::int64_t j = 0; j < rows.n; ++j) {
      const T shifted = x[at + j * s] - max;
      y[at + j * s] = Log ? shifted - log_sum : device_exp(shifted) * inv;
    }
  }
}

template <bool Log, typename T>
__global__ void backward_strided_kernel(const T* __restrict__ g, const T* __restrict__ y,
                                        T* __restrict__ dx, AxisRows rows) {
  const std::int64_t s = rows.inner;
  for (std::int64_t r = cuda::global_thread(); r < rows.count(); r += cuda::global_stride()) {
    const std::int64_t at = rows.start(r);
    T total = 0;
    for (std::int64_t j = 0; j < rows.n; ++j) {
      const std::int64_t k = at + j * s;
      total += Log ? g[k] : g[k] * y[k];
    }
    for (std::int64_t j = 0; j < rows.n; ++j) {
      const std::int64_t k = at + j * s;
      dx[k] = Log ? g[k] - device_exp(y[k]) * total : y[k] * (g[k] - total);
    }
  }
}

}  // namespace

template <bool Log>
void softmax_forward_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const AxisRows rows = softmax_rows(x.shape(), ctx.attrs);
  if (x.numel() == 0) return;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    if (rows.inner == 1) {
      forward_rows_kernel<Log>
          <<<cuda::blocks_for(rows.count(), 1), cuda::threads_for_row(rows.n), 0, stream>>>(
              x.data<T>(), ctx.out.data<T>(), rows.count(), rows.n);
    } else {
      forward_strided_kernel<Log>
          <<<cuda::blocks_for(rows.count()), cuda::kThreadsPerBlock, 0, stream>>>(
              x.data<T>(), ctx.out.data<T>(), rows);
    }
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

template <bool Log>
void softmax_backward_cuda(const KernelContext& ctx) {
  const Tensor& g = ctx.inputs[0];
  const AxisRows rows = softmax_rows(g.shape(), ctx.attrs);
  if (g.numel() == 0) return;
  cudaStream_t stream = cuda::activate(g.device()).stream();
  dispatch_float(g.dtype(), [&]<typename T>() {
    const T* pg = g.data<T>();
    const T* py = ctx.inputs[1].data<T>();
    if (rows.inner == 1) {
      backward_rows_kernel<Log>
          <<<cuda::blocks_for(rows.count(), 1), cuda::threads_for_row(rows.n), 0, stream>>>(
              pg, py, ctx.out.data<T>(), rows.count(), rows.n);
    } else {
      backward_strided_kernel<Log>
          <<<cuda::blocks_for(rows.count()), cuda::kThreadsPerBlock, 0, stream>>>(
              pg, py, ctx.out.data<T>(), rows);
    }
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

template void softmax_forward_cuda<false>(const KernelContext&);
template void softmax_forward_cuda<true>(const KernelContext&);
template void softmax_backward_cuda<false>(const KernelContext&);
template void softmax_backward_cuda<true>(const KernelContext&);

}  // namespace mg
