// layer_norm on CUDA: one block per row for the forward and for dx (block_reduce, the same
// tree every run); the weight and bias gradients as partial sums per chunk of
// kLayerNormRowsPerChunk rows (a thread per column and chunk), then a thread per column adds
// the chunks in order: no atomics, the same bits every run.
//   N rows of D; see layer_norm_kernels.h
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/block_reduce.cuh"
#include "layer_norm/layer_norm_kernels.h"

namespace mg {

namespace {

using cuda::block_reduce;
using cuda::SumOp;

__device__ inline float device_rsqrt(float x) { return 1.0f / sqrtf(x); }
__device__ inline double device_rsqrt(double x) { return 1.0 / sqrt(x); }

// Statistics in the element type's wider partner would cost f64 throughput; sums in T over a
// block's threads, each thread adding D / blockDim terms, then the fixed tree.
template <typename T>
__global__ void forward_kernel(const T* __restrict__ x, const T* __restrict__ w,
                               const T* __restrict__ b, T* __restrict__ y, T* __restrict__ mean_out,
                               T* __restrict__ rstd_out, std::int64_t n, std::int64_t d,
                               double eps) {
  __shared__ T scratch[32];
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const T* xr = x + row * d;
    T sum = 0;
    for (std::int64_t j = threadIdx.x; j < d; j += blockDim.x) sum += xr[j];
    const T mean = block_reduce(sum, SumOp{}, scratch) / static_cast<T>(d);
    T squares = 0;
    for (std::int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      const T c = xr[j] - mean;
      squares += c * c;
    }
    squares = block_reduce(squares, SumOp{}, scratch);
    const T rstd = device_rsqrt(squares / static_cast<T>(d) + static_cast<T>(eps));
    for (std::int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      y[row * d + j] = (xr[j] - mean) * rstd * w[j] + b[j];
    }
    if (threadIdx.x == 0 && mean_out != nullptr) mean_out[row] = mean, rstd_out[row] = rstd;
  }
}

template <typename T>
__global__ void dx_kernel(const T* __restrict__ g, const T* __restrict__ x, const T* __restrict__ w,
                          const T* __restrict__ mean, const T* __restrict__ rstd,
                          T* __restrict__ dx, std::int64_t n, std::int64_t d) {
  __shared__ T scratch[32];
  for (std::int64_t row = blockIdx.x; row < n; row += gridDim.x) {
    const std::int64_t at = row * d;
    const T m = mean[row], r = rstd[row];
    T sum_dxhat = 0, sum_dxhat_xhat = 0;
    for (std::int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      const T dxhat = g[at + j] * w[j];
      sum_dxhat += dxhat;
      sum_dxhat_xhat += dxhat * (x[at + j] - m) * r;
    }
    const T a = block_reduce(sum_dxhat, SumOp{}, scratch) / static_cast<T>(d);
    const T b = block_reduce(sum_dxhat_xhat, SumOp{}, scratch) / static_cast<T>(d);
    for (std::int64_t j = threadIdx.x; j < d; j += blockDim.x) {
      const T xhat = (x[at + j] - m) * r;
      dx[at + j] = r * (g[at + j] * w[j] - a - xhat * b);
    }
  }
}

// partial [chunks, 2, D]: thread (column j, chunk c) sums its chunk's rows.
template <typename T>
__global__ void partial_kernel(const T* __restrict__ g, const T* __restrict__ x,
                               const T* __restrict__ mean, const T* __restrict__ rstd,
                               T* __restrict__ partial, std::int64_t n, std::int64_t d) {
  const std::int64_t j = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  const std::int64_t c = blockIdx.y;
  if (j >= d) return;
  const std::int64_t end = min(n, (c + 1) * kLayerNormRowsPerChunk);
  T dw = 0, db = 0;
  for (std::int64_t i = c * kLayerNormRowsPerChunk; i < end; ++i) {
    const T gi = g[i * d + j];
    dw += gi * (x[i * d + j] - mean[i]) * rstd[i];
    db += gi;
  }
  partial[(c * 2) * d + j] = dw;
  partial[(c * 2 + 1) * d + j] = db;
}

// sums [2, D] (dweight, dbias) = the chunks' partials added in chunk order.
template <typename T>
__global__ void chunk_sum_kernel(const T* __restrict__ partial, T* __restrict__ sums,
                                 std::int64_t chunks, std::int64_t d) {
  for (std::int64_t k = cuda::global_thread(); k < 2 * d; k += cuda::global_stride()) {
    T total = 0;
    for (std::int64_t c = 0; c < chunks; ++c) total += partial[c * 2 * d + k];
    sums[k] = total;
  }
}

}  // namespace

void layer_norm_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const LayerNormRows rows = layer_norm_rows(x, ctx.attrs);
  const auto& attrs = ctx.attrs_as<LayerNormAttrs>();
  Tensor mean, rstd;
  if (ctx.saved != nullptr) {
    mean = Tensor::empty(rows.leading, x.dtype(), x.device());
    rstd = Tensor::empty(rows.leading, x.dtype(), x.device());
    ctx.saved->push_back(mean);
    ctx.saved->push_back(rstd);
  }
  if (rows.n == 0) return;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    forward_kernel<<<cuda::blocks_for(rows.n, 1), cuda::threads_for_row(rows.d), 0, stream>>>(
        x.data<T>(), ctx.inputs[1].data<T>(), ctx.inputs[2].data<T>(), ctx.out.data<T>(),
        mean.defined() ? mean.data<T>() : nullptr, rstd.defined() ? rstd.data<T>() : nullptr,
        rows.n, rows.d, attrs.eps);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

void layer_norm_backward_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[1];
  const LayerNormRows rows = layer_norm_rows(x, ctx.attrs);
  const std::int64_t d = rows.d;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    T* out = ctx.out.data<T>();  // dx [N, D], dweight [D], dbias [D]
    const T *pg = ctx.inputs[0].data<T>(), *px = x.data<T>(), *pw = ctx.inputs[2].data<T>();
    const T *pm = ctx.inputs[3].data<T>(), *pr = ctx.inputs[4].data<T>();
    if (rows.n == 0) {
      MG_CUDA_CHECK(cudaMemsetAsync(out, 0, 2 * d * sizeof(T), stream));
      return;
    }
    dx_kernel<<<cuda::blocks_for(rows.n, 1), cuda::threads_for_row(d), 0, stream>>>(
        pg, px, pw, pm, pr, out, rows.n, d);
    const std::int64_t chunks = (rows.n + kLayerNormRowsPerChunk - 1) / kLayerNormRowsPerChunk;
    Tensor partial = Tensor::empty({chunks, 2, d}, x.dtype(), x.device());
    const dim3 grid(cuda::blocks_for(d), static_cast<unsigned int>(chunks));
    partial_kernel<<<grid, cuda::kThreadsPerBlock, 0, stream>>>(pg, px, pm, pr, partial.data<T>(),
                                                                rows.n, d);
    chunk_sum_kernel<<<cuda::blocks_for(2 * d), cuda::kThreadsPerBlock, 0, stream>>>(
        partial.data<T>(), out + rows.n * d, chunks, d);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

}  // namespace mg
