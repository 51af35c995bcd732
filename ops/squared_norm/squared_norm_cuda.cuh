// The device launcher behind squared_norm_cuda (squared_norm_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mg::cuda {

// Device scratch squared_norm_launch needs for `chunks` chunks: one double per chunk.
std::size_t squared_norm_scratch_bytes(std::int64_t chunks);

// *out = sum of x[i]^2 over [0, count), accumulated in double in a fixed order (a tree per
// chunk of `chunk` elements, then the chunk sums as a tree over one block): the same bits on
// every run. scratch: squared_norm_scratch_bytes(ceil(count / chunk)).
template <typename T>
void squared_norm_launch(const T* x, std::int64_t count, std::int64_t chunk, T* out, void* scratch,
                         cudaStream_t stream);

}  // namespace mg::cuda
