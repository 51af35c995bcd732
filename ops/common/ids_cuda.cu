// The id range check on the device (see ids_cuda.cuh).
//   N ids; ids [N] -> *first_bad = min { i : ids[i] outside [0, rows) }
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids_cuda.cuh"

namespace mg::cuda {

namespace {

template <typename Id>
__global__ void find_first_bad_id_kernel(const Id* __restrict__ ids, std::int64_t count,
                                         std::int64_t rows, unsigned long long* first_bad) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    const std::int64_t id = ids[i];
    if (id < 0 || id >= rows) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
}

}  // namespace

template <typename Id>
void find_first_bad_id(const Id* ids, std::int64_t count, std::int64_t rows,
                       unsigned long long* first_bad, cudaStream_t stream) {
  find_first_bad_id_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(ids, count, rows,
                                                                               first_bad);
  MG_CUDA_CHECK(cudaGetLastError());
}

template void find_first_bad_id<std::int32_t>(const std::int32_t*, std::int64_t, std::int64_t,
                                              unsigned long long*, cudaStream_t);
template void find_first_bad_id<std::int64_t>(const std::int64_t*, std::int64_t, std::int64_t,
                                              unsigned long long*, cudaStream_t);

}  // namespace mg::cuda
