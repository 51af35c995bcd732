// The host side of the device id check: queue the scan, read back the first bad position.
#include "common/ids_cuda.cuh"

#include <limits>

#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "minigraph/op.h"

namespace mg::cuda {

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
