// embedding on CUDA: check the ids on the device (an out-of-range id throws the
// CPU's error, and the context stays usable), then the row gather: one block per id copies
// that id's table row, 16 bytes per load when the row width and pointers allow, so each row is
// read once per use at full width.
//   N ids, D width, V rows; table [V, D], ids [N] -> out [N, D]
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids.h"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"

namespace mg::cuda {

namespace {

// Element: T or Vec16<T>; width counts Elements.
template <typename Element, typename Id>
__global__ void gather_rows_kernel(const Element* __restrict__ table, const Id* __restrict__ ids,
                                   Element* __restrict__ out, std::int64_t count,
                                   std::int64_t width) {
  for (std::int64_t row = blockIdx.x; row < count; row += gridDim.x) {
    const Element* src = table + static_cast<std::int64_t>(ids[row]) * width;  // (D,)
    Element* dst = out + row * width;                                          // (D,)
    for (std::int64_t d = threadIdx.x; d < width; d += blockDim.x) dst[d] = src[d];
  }
}

template <typename Element, typename Id>
void launch_gather(const Element* table, const Id* ids, Element* out, std::int64_t count,
                   std::int64_t width, cudaStream_t stream) {
  gather_rows_kernel<<<blocks_for(count, 1), threads_for_row(width), 0, stream>>>(table, ids, out,
                                                                                  count, width);
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace

template <typename T, typename Id>
void gather_rows(const T* table, const Id* ids, T* out, std::int64_t count, std::int64_t width,
                 cudaStream_t stream) {
  if (count == 0 || width == 0) return;
  if (vec16_ok<T>(width, table, out)) {
    launch_gather(reinterpret_cast<const Vec16<T>*>(table), ids, reinterpret_cast<Vec16<T>*>(out),
                  count, width / kVecLanes<T>, stream);
  } else {
    launch_gather(table, ids, out, count, width, stream);
  }
}

}  // namespace mg::cuda

namespace mg {

void embedding_cuda(const KernelContext& ctx) {
  const Tensor& table = ctx.inputs[0];  // [V, D]
  const Tensor& ids = ctx.inputs[1];    // [...]
  const std::int64_t rows = table.size(0);
  CudaBackend& backend = cuda::activate(ctx.out.device());
  if (auto bad = cuda::first_bad_id(ids, rows)) {
    throw_bad_id("embedding", bad->id, bad->position, ids.shape(), rows);
  }
  dispatch_float(ctx.out.dtype(), [&]<typename T>() {
    dispatch_ids(ids.dtype(), [&]<typename Id>() {
      cuda::gather_rows(table.data<T>(), ids.data<Id>(), ctx.out.data<T>(), ids.numel(),
                        table.size(1), backend.stream());
    });
  });
}

}  // namespace mg
