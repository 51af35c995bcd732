// Shared by the .cu files: grid sizes for grid-stride loops and the 16-byte vector types that
// let a thread move four floats or two doubles per load.
#pragma once

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

namespace mg::cuda {

inline constexpr int kThreadsPerBlock = 256;
// Enough blocks to fill any current GPU several times over; grid-stride loops do the rest.
inline constexpr std::int64_t kMaxBlocks = 65535;

// Blocks for `work_items` items of `per_block` each, at least one, at most kMaxBlocks.
inline unsigned int blocks_for(std::int64_t work_items, std::int64_t per_block = kThreadsPerBlock) {
  return static_cast<unsigned int>(
      std::clamp<std::int64_t>((work_items + per_block - 1) / per_block, 1, kMaxBlocks));
}

// Threads for a block that walks one row of `width` items: whole warps, at most a full block.
inline unsigned int threads_for_row(std::int64_t width) {
  return static_cast<unsigned int>(
      std::clamp<std::int64_t>((width + 31) / 32 * 32, 32, kThreadsPerBlock));
}

// float4 for float, double2 for double: 16 bytes, one vector load. Any other T fails to
// compile: a catch-all would read an int as a double2.
template <typename T>
struct Vec16Of {
  static_assert(sizeof(T) == 0, "Vec16<T>: T must be float or double");
};
template <>
struct Vec16Of<float> {
  using type = float4;
};
template <>
struct Vec16Of<double> {
  using type = double2;
};
template <typename T>
using Vec16 = typename Vec16Of<T>::type;
template <typename T>
inline constexpr std::int64_t kVecLanes = 16 / sizeof(T);

// True when rows of `width` elements at these pointers can be read and written as Vec16.
template <typename T, typename... Ptrs>
bool vec16_ok(std::int64_t width, const Ptrs*... ptrs) {
  return width % kVecLanes<T> == 0 && ((reinterpret_cast<std::uintptr_t>(ptrs) % 16 == 0) && ...);
}

__device__ inline float4 operator+(float4 a, float4 b) {
  return {a.x + b.x, a.y + b.y, a.z + b.z, a.w + b.w};
}
__device__ inline double2 operator+(double2 a, double2 b) { return {a.x + b.x, a.y + b.y}; }

// The grid-stride loop's start and step for the calling thread.
__device__ inline std::int64_t global_thread() {
  return static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}
__device__ inline std::int64_t global_stride() {
  return static_cast<std::int64_t>(gridDim.x) * blockDim.x;
}

}  // namespace mg::cuda
