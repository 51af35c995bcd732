// The device launcher behind broadcast_to_cuda (broadcast_to_cuda.cpp): plain pointers, sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/broadcast_layout.h"

namespace mg::cuda {

// out[i] = x[offset(i)]   out [count], with x as the layout's input a (its stride_a; 0 where x
// is repeated). T: float or double; queued on `stream`.
template <typename T>
void broadcast_to_launch(const T* x, T* out, std::int64_t count, const BroadcastLayout& layout,
                         cudaStream_t stream);

}  // namespace mg::cuda
