// linear_cross_entropy on CUDA: the CPU kernel's steps on the device's stream.
// Legend: N rows, D width, V vocabulary, R rows per chunk.
//   x [N, D], w [D, V], targets [N] -> loss []; saved (when a backward can come): dx [N, D],
//   dw [D, V], the gradients for an upstream 1.
// 1. Scan the targets on the device (a bad one throws the CPU's error; the scan also counts
//    the rows a mean divides by).
// 2. Per chunk, in one [R, V] buffer: logits = x_c @ w (cuBLAS); per row the loss and, in
//    place, dlogits (below); dx_c = dlogits @ wᵀ; dw += x_cᵀ @ dlogits
//    (cuBLAS with beta = 1, in T: f32 or wider).
// 3. The rows' losses [N] in f64 summed by cross_entropy's fixed tree: the same bits every run.
// The row step between the GEMMs: one block per row of a chunk's
// logits finds the row's max and sum of exp (block reductions in a fixed order, as
// cross_entropy's), thread 0 writes the row's loss, and the block overwrites the row with its
// gradient (softmax - onehot) * scale. Each element is read and then written by the same
// thread after the reductions: in place without a race, and no atomics.
//   R rows of the chunk, V vocabulary; logits [R, V] -> dlogits [R, V] in place, losses [R]
#include <algorithm>
#include <cmath>

#include "backends/cuda/cublas_gemm.h"
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "cross_entropy/cross_entropy_cuda.cuh"
#include "cross_entropy/cross_entropy_row.cuh"
#include "linear_cross_entropy/linear_cross_entropy.h"
#include "linear_cross_entropy/linear_cross_entropy_common.h"
#include "minigraph/op.h"

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

}  // namespace mg::cuda

namespace mg {

namespace {

// c = op(a) op(b) [m, n], or += when accumulate; an empty inner size k writes zeros (or
// nothing), which cuBLAS is not asked to do.
void product(CudaBackend& backend, DType dtype, const void* a, const void* b, void* c,
             std::int64_t m, std::int64_t n, std::int64_t k, bool transpose_a, bool transpose_b,
             bool accumulate) {
  if (m == 0 || n == 0) return;
  if (k == 0) {
    if (!accumulate) backend.fill_zero(c, static_cast<std::size_t>(m * n) * dtype_size(dtype));
    return;
  }
  cuda::gemm_row_major(backend.cublas(), {.dtype = dtype,
                                          .transpose_a = transpose_a,
                                          .transpose_b = transpose_b,
                                          .m = m,
                                          .n = n,
                                          .k = k,
                                          .a = a,
                                          .b = b,
                                          .c = c,
                                          .accumulate = accumulate});
}

template <typename T, typename Id>
void linear_cross_entropy_run(const KernelContext& ctx, CudaBackend& backend,
                              std::int64_t counted) {
  const auto& o = ctx.attrs_as<LinearCrossEntropyOptions>();
  const Tensor& x = ctx.inputs[0];        // [N, D] (any leading axes)
  const Tensor& w = ctx.inputs[1];        // [D, V]
  const Tensor& targets = ctx.inputs[2];  // [N]
  const std::int64_t width = w.size(0), vocab = w.size(1), rows = targets.numel();
  const DType dtype = ctx.out.dtype();
  const Device device = ctx.out.device();

  const bool want_dx = ctx.saved != nullptr && x.requires_grad();
  const bool want_dw = ctx.saved != nullptr && w.requires_grad();
  const bool gradients = want_dx || want_dw;
  Tensor dx, dw;
  if (want_dx) dx = Tensor::empty(x.shape(), dtype, device);       // [N, D]
  if (want_dw) dw = Tensor::empty({width, vocab}, dtype, device);  // [D, V]
  const double scale = o.reduction == Reduction::mean
                           ? (counted > 0 ? 1.0 / static_cast<double>(counted) : 0.0)
                           : 1.0;

  const std::int64_t chunk = linear_cross_entropy_chunk_rows(
      o.chunk_bytes, vocab, static_cast<std::int64_t>(sizeof(T)), rows);
  Tensor buffer = Tensor::empty({chunk, vocab}, dtype, device);  // [R, V]: logits, then dlogits
  cuda::DeviceBuffer losses(
      backend, static_cast<std::size_t>(std::max<std::int64_t>(rows, 1)) * sizeof(double));  // (N,)
  T* logits = buffer.data<T>();
  const T* xs = x.data<T>();
  const Id* ts = targets.data<Id>();
  for (std::int64_t begin = 0; begin < rows; begin += chunk) {
    const std::int64_t r = std::min(chunk, rows - begin);
    const T* x_chunk = xs + begin * width;  // [r, D]
    product(backend, dtype, x_chunk, w.raw_data(), logits, r, vocab, width, false, false, false);
    cuda::linear_cross_entropy_rows(logits, ts + begin, r, vocab, o.ignore_index, gradients, scale,
                                    losses.as<double>() + begin, backend.stream());
    if (want_dx) {
      product(backend, dtype, logits, w.raw_data(), dx.data<T>() + begin * width, r, width, vocab,
              false, true, false);
    }
    if (want_dw) {
      product(backend, dtype, x_chunk, logits, dw.raw_data(), width, vocab, r, true, false,
              begin > 0);
    }
  }
  if (want_dw && rows == 0) backend.fill_zero(dw.raw_data(), static_cast<std::size_t>(dw.nbytes()));
  cuda::reduce_row_losses(losses.as<double>(), rows, o.reduction == Reduction::mean, counted,
                          ctx.out.data<T>(), backend.stream());
  if (ctx.saved != nullptr) {
    ctx.saved->push_back(dx);
    ctx.saved->push_back(dw);
  }
}

}  // namespace

void linear_cross_entropy_cuda(const KernelContext& ctx) {
  const auto& o = ctx.attrs_as<LinearCrossEntropyOptions>();
  const Tensor& targets = ctx.inputs[2];
  const std::int64_t vocab = ctx.inputs[1].size(1);
  CudaBackend& backend = cuda::activate(ctx.out.device());
  const cuda::TargetScan scan = cuda::scan_targets(targets, vocab, o.ignore_index);
  if (scan.bad) {
    throw_bad_target(ctx.op.name, scan.bad->id, scan.bad->position, targets.shape(), vocab,
                     o.ignore_index);
  }
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(targets.dtype(), [&]<typename Id>() {
      linear_cross_entropy_run<T, Id>(ctx, backend, scan.counted);
    });
  });
}

}  // namespace mg
