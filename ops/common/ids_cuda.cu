// The id range checks on the device (ids_cuda.cuh): queue the scan, read back the first bad
// position.
//   N ids; ids [N] -> *first_bad = min { i : ids[i] outside [0, rows) }
//   N targets; targets [N] -> *first_bad = min { i : targets[i] outside [0, classes), not
//   ignore_index }, *counted = #{ i : targets[i] != ignore_index }
#include <limits>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "common/ids_cuda.cuh"
#include "minigraph/op.h"

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

}  // namespace

std::optional<BadId> first_bad_id(const Tensor& ids, std::int64_t rows) {
  if (ids.numel() == 0) return std::nullopt;
  CudaBackend& backend = activate(ids.device());
  constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
  DeviceBuffer first_bad(backend, sizeof(unsigned long long));
  MG_CUDA_CHECK(cudaMemsetAsync(first_bad.data(), 0xFF, sizeof kNone, backend.stream()));
  dispatch_ids(ids.dtype(), [&]<typename Id>() {
    find_first_bad_id(ids.data<Id>(), ids.numel(), rows, first_bad.as<unsigned long long>(),
                      backend.stream());
  });
  unsigned long long position = kNone;
  backend.copy_to_host(&position, first_bad.data(), sizeof position);
  if (position == kNone) return std::nullopt;
  const auto index = static_cast<std::int64_t>(position);
  return BadId{index, dispatch_ids(ids.dtype(), [&]<typename Id>() {
                 Id id = 0;
                 backend.copy_to_host(&id, ids.data<Id>() + index, sizeof id);
                 return static_cast<std::int64_t>(id);
               })};
}

TargetScan scan_targets(const Tensor& targets, std::int64_t classes, std::int64_t ignore_index) {
  TargetScan scan;
  if (targets.numel() == 0) return scan;
  CudaBackend& backend = activate(targets.device());
  constexpr unsigned long long kNone = std::numeric_limits<unsigned long long>::max();
  // [0]: the first bad position (~0: none), [1]: the count of targets not ignored.
  DeviceBuffer result(backend, 2 * sizeof(unsigned long long));
  auto* words = result.as<unsigned long long>();
  MG_CUDA_CHECK(cudaMemsetAsync(words, 0xFF, sizeof kNone, backend.stream()));
  MG_CUDA_CHECK(cudaMemsetAsync(words + 1, 0, sizeof kNone, backend.stream()));
  dispatch_ids(targets.dtype(), [&]<typename Id>() {
    scan_targets_on_device(targets.data<Id>(), targets.numel(), classes, ignore_index, words,
                           words + 1, backend.stream());
  });
  unsigned long long host[2] = {kNone, 0};
  backend.copy_to_host(host, words, sizeof host);
  scan.counted = static_cast<std::int64_t>(host[1]);
  if (host[0] == kNone) return scan;
  const auto index = static_cast<std::int64_t>(host[0]);
  scan.bad = BadId{index, dispatch_ids(targets.dtype(), [&]<typename Id>() {
                     Id id = 0;
                     backend.copy_to_host(&id, targets.data<Id>() + index, sizeof id);
                     return static_cast<std::int64_t>(id);
                   })};
  return scan;
}

}  // namespace mg::cuda
