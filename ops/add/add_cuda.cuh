// The device launchers behind add_cuda (add_cuda.cpp): plain pointers and sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

inline constexpr int kMaxBroadcastRank = 8;

// out's shape with size-1 axes dropped and contiguous runs merged, and each input's element
// stride along every axis (0 where that input is broadcast).
struct BroadcastLayout {
  int rank;
  std::int64_t size[kMaxBroadcastRank];
  std::int64_t stride_a[kMaxBroadcastRank];
  std::int64_t stride_b[kMaxBroadcastRank];
};

// T: float or double. All queue their work on `stream`.
// out[i] = a[i] + b[i]                         a, b, out [count]
template <typename T>
void add_same_shape(const T* a, const T* b, T* out, std::int64_t count, cudaStream_t stream);
// out[r, j] = full[r, j] + part[j]             full, out [repeats, width], part [width]
template <typename T>
void add_repeated(const T* full, const T* part, T* out, std::int64_t repeats, std::int64_t width,
                  cudaStream_t stream);
// out[i] = a[offset_a(i)] + b[offset_b(i)]     out [count], any broadcast
template <typename T>
void add_broadcast(const T* a, const T* b, T* out, std::int64_t count,
                   const BroadcastLayout& layout, cudaStream_t stream);

}  // namespace mg::cuda
