// The max rows on CUDA. Forward: one thread per row, walking it in order as the CPU does (the
// same first extremum, the same NaN), neighbouring threads on neighbouring rows (coalesced
// when dim is not the last axis). Backward: the indices checked on the device first (the
// CPU's error, no device-side assert), then one thread per element of x: grad_out where its
// row's index points, 0 elsewhere, so no element is written twice.
//   R rows of N; x [R rows of N] -> out [R]; backward: grad_out [R], indices [R] -> [R rows of N]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids_cuda.cuh"
#include "max/max.h"
#include "max/max_kernels.h"

namespace mg {

namespace {

// values or indices may be null (argmax: no values; a values row with no backward to come:
// no indices).
template <bool Min, typename T>
__global__ void max_rows_kernel(const T* __restrict__ x, T* __restrict__ values,
                                std::int64_t* __restrict__ indices, AxisRows rows) {
  for (std::int64_t r = cuda::global_thread(); r < rows.count(); r += cuda::global_stride()) {
    const T* row = x + rows.start(r);
    T best = row[0];
    std::int64_t at = 0;
    for (std::int64_t j = 1; j < rows.n; ++j) {
      const T v = row[j * rows.inner];
      if (max_replaces<Min>(v, best)) {
        best = v;
        at = j;
      }
    }
    if (values != nullptr) values[r] = best;
    if (indices != nullptr) indices[r] = at;
  }
}

template <typename T, typename Id>
__global__ void max_backward_kernel(const T* __restrict__ g, const Id* __restrict__ indices,
                                    T* __restrict__ out, std::int64_t numel, AxisRows rows) {
  for (std::int64_t k = cuda::global_thread(); k < numel; k += cuda::global_stride()) {
    const std::int64_t j = k / rows.inner % rows.n;
    const std::int64_t r = k / (rows.inner * rows.n) * rows.inner + k % rows.inner;
    out[k] = static_cast<std::int64_t>(indices[r]) == j ? g[r] : T(0);
  }
}

}  // namespace

template <bool Min, bool Indices>
void max_forward_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const auto& a = ctx.attrs_as<MaxAttrs>();
  const AxisRows rows = axis_rows(x.shape(), a.dim, ctx.op.name);
  std::int64_t* indices = nullptr;
  if constexpr (Indices) {
    indices = ctx.out.data<std::int64_t>();
  } else if (ctx.saved != nullptr) {
    Tensor saved = Tensor::empty(ctx.out.shape(), DType::i64, x.device());
    indices = saved.data<std::int64_t>();
    ctx.saved->push_back(saved);
  }
  if (rows.count() == 0) return;
  cudaStream_t stream = cuda::activate(x.device()).stream();
  dispatch_float(x.dtype(), [&]<typename T>() {
    T* values = nullptr;
    if constexpr (!Indices) values = ctx.out.data<T>();
    max_rows_kernel<Min><<<cuda::blocks_for(rows.count()), cuda::kThreadsPerBlock, 0, stream>>>(
        x.data<T>(), values, indices, rows);
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

void max_backward_cuda(const KernelContext& ctx) {
  const Tensor& g = ctx.inputs[0];
  const Tensor& idx = ctx.inputs[1];
  const auto& a = ctx.attrs_as<MaxBackwardAttrs>();
  const AxisRows rows = axis_rows(a.x_shape, a.dim, ctx.op.name);
  cudaStream_t stream = cuda::activate(ctx.out.device()).stream();
  if (auto bad = cuda::first_bad_id(idx, rows.n)) {
    throw_bad_max_index(bad->id, bad->position, idx.shape(), rows.n);
  }
  const std::int64_t numel = ctx.out.numel();
  if (numel == 0) return;
  dispatch_float(g.dtype(), [&]<typename T>() {
    dispatch_ids(idx.dtype(), [&]<typename Id>() {
      max_backward_kernel<<<cuda::blocks_for(numel), cuda::kThreadsPerBlock, 0, stream>>>(
          g.data<T>(), idx.data<Id>(), ctx.out.data<T>(), numel, rows);
      MG_CUDA_CHECK(cudaGetLastError());
    });
  });
}

template void max_forward_cuda<false, false>(const KernelContext&);
template void max_forward_cuda<true, false>(const KernelContext&);
template void max_forward_cuda<false, true>(const KernelContext&);
template void max_forward_cuda<true, true>(const KernelContext&);

}  // namespace mg
