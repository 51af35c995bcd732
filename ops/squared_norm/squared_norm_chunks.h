// The summation order squared_norm's kernels share, so that the CPU's thread count and the
// GPU's scheduling change nothing: x is cut into chunks of kSquaredNormChunk elements; each
// chunk's squares are summed in double, and the chunk sums are then added in chunk order. (The
// CUDA kernel sums a chunk as a fixed tree over its threads instead: also one fixed order.)
#pragma once

#include <cstdint>

namespace mg {

inline constexpr std::int64_t kSquaredNormChunk = 4096;

inline std::int64_t squared_norm_chunks(std::int64_t count) {
  return (count + kSquaredNormChunk - 1) / kSquaredNormChunk;
}

}  // namespace mg
