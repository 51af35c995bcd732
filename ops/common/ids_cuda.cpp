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

}  // namespace mg::cuda
