// The id range checks on the device (see ids_cuda.cuh).
//   N ids; ids [N] -> *first_bad = min { i : ids[i] outside [0, rows) }
//   N targets; targets [N] -> *first_bad = min { i : targets[i] outside [0, classes), not
//   ignore_index }, *counted = #{ i : targets[i] != ignore_index }
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

// Each thread counts its own targets and adds its count once: an integer sum, the same whatever
// the order.
template <typename Id>
__global__ void scan_targets_kernel(const Id* __restrict__ targets, std::int64_t count,
                                    std::int64_t classes, std::int64_t ignore_index,
                                    unsigned long long* first_bad, unsigned long long* counted) {
  unsigned long long mine = 0;
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    const std::int64_t t = targets[i];
    if (t == ignore_index) continue;
    ++mine;
    if (t < 0 || t >= classes) atomicMin(first_bad, static_cast<unsigned long long>(i));
  }
  if (mine != 0) atomicAdd(counted, mine);
}

}  // namespace

template <typename Id>
void scan_targets_on_device(const Id* targets, std::int64_t count, std::int64_t classes,
                            std::int64_t ignore_index, unsigned long long* first_bad,
                            unsigned long long* counted, cudaStream_t stream) {
  scan_targets_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(
      targets, count, classes, ignore_index, first_bad, counted);
  MG_CUDA_CHECK(cudaGetLastError());
}

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

#define MG_INSTANTIATE(Id)                                                                      \
  template void scan_targets_on_device<Id>(const Id*, std::int64_t, std::int64_t, std::int64_t, \
                                           unsigned long long*, unsigned long long*,            \
                                           cudaStream_t);
MG_INSTANTIATE(std::int32_t)
MG_INSTANTIATE(std::int64_t)
#undef MG_INSTANTIATE

}  // namespace mg::cuda
