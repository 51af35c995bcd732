// The device side of the id checks shared by the embedding ops and the losses: finds the first
// id outside [0, rows) (or target outside [0, classes) that is not ignore_index) without a
// device-side assert (which would poison the CUDA context for good).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <optional>

namespace mg {
class Tensor;
}

namespace mg::cuda {

// An id outside the table and its flat index in the ids tensor.
struct BadId {
  std::int64_t position;
  std::int64_t id;
};
// The first (lowest-index) id of `ids` (i32 or i64, on a CUDA device) outside [0, rows),
// found on the device; waits for the stream. The embedding ops turn it into the CPU's error.
// Host code (ids_cuda.cpp).
std::optional<BadId> first_bad_id(const Tensor& ids, std::int64_t rows);

// Lowers *first_bad (set to ~0 beforehand) to the lowest flat index of an id outside [0, rows),
// so the error names the same id as the CPU's scan. Queued on `stream`. Id: int32_t or int64_t.
template <typename Id>
void find_first_bad_id(const Id* ids, std::int64_t count, std::int64_t rows,
                       unsigned long long* first_bad, cudaStream_t stream);

// A loss's targets, scanned on the device: the first target outside [0, classes) that is not
// ignore_index (none if all are good), and how many targets are not ignore_index (the rows a
// mean counts). Waits for the stream. Host code (ids_cuda.cpp).
struct TargetScan {
  std::optional<BadId> bad;  // BadId::id holds the target's value
  std::int64_t counted = 0;
};
TargetScan scan_targets(const Tensor& targets, std::int64_t classes, std::int64_t ignore_index);

// Lowers *first_bad (set to ~0 beforehand) to the lowest flat index of a target outside
// [0, classes) that is not ignore_index, and adds to *counted (zeroed beforehand) the number
// of targets that are not ignore_index. Queued on `stream`. Id: int32_t or int64_t.
template <typename Id>
void scan_targets_on_device(const Id* targets, std::int64_t count, std::int64_t classes,
                            std::int64_t ignore_index, unsigned long long* first_bad,
                            unsigned long long* counted, cudaStream_t stream);

}  // namespace mg::cuda
