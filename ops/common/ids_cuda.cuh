// The device side of the id check shared by the embedding ops: finds the first id outside
// [0, rows) without a device-side assert (which would poison the CUDA context for good).
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

}  // namespace mg::cuda
