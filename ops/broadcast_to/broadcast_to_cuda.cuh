// The device launcher behind broadcast_to_cuda (broadcast_to_cuda.cpp): plain pointers, sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

inline constexpr int kMaxRepeatRank = 8;

// out's shape with size-1 axes dropped and contiguous runs merged, and x's element stride
// along every axis (0 where x is repeated).
struct RepeatLayout {
  int rank;
  std::int64_t size[kMaxRepeatRank];
  std::int64_t stride_x[kMaxRepeatRank];
};

// out[i] = x[offset_x(i)]   out [count]. T: float or double; queued on `stream`.
template <typename T>
void broadcast_to_launch(const T* x, T* out, std::int64_t count, const RepeatLayout& layout,
                         cudaStream_t stream);

}  // namespace mg::cuda
