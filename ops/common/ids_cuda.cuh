// The id checks on a CUDA device, shared by the embedding ops and the losses: find the first
// id outside [0, rows) (or target outside [0, classes) that is not ignore_index) without a
// device-side assert (which would poison the CUDA context for good).
#pragma once

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
std::optional<BadId> first_bad_id(const Tensor& ids, std::int64_t rows);

// A loss's targets, scanned on the device: the first target outside [0, classes) that is not
// ignore_index (none if all are good), and how many targets are not ignore_index (the rows a
// mean counts). Waits for the stream.
struct TargetScan {
  std::optional<BadId> bad;  // BadId::id holds the target's value
  std::int64_t counted = 0;
};
TargetScan scan_targets(const Tensor& targets, std::int64_t classes, std::int64_t ignore_index);

}  // namespace mg::cuda
