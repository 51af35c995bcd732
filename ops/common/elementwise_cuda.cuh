// The device launchers behind elementwise_binary_cuda (elementwise_cuda.cpp): plain pointers
// and sizes, the function named by BinaryOp.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

#include "common/broadcast_layout.h"
#include "common/elementwise_functors.h"

namespace mg::cuda {

// T: float or double. All queue their work on `stream`. out may be a, b or full itself.
// out[i] = fn(a[i], b[i])                        a, b, out [count]
template <typename T>
void binary_same_shape(BinaryOp op, const T* a, const T* b, T* out, std::int64_t count,
                       cudaStream_t stream);
// out[r, j] = fn(full[r, j], part[j])            full, out [repeats, width], part [width]
// or fn(part[j], full[r, j]) when !full_is_a (full is b: the operands keep their order).
template <typename T>
void binary_repeated(BinaryOp op, bool full_is_a, const T* full, const T* part, T* out,
                     std::int64_t repeats, std::int64_t width, cudaStream_t stream);
// out[i] = fn(a[offset_a(i)], b[offset_b(i)])    out [count], any broadcast (layout)
template <typename T>
void binary_broadcast(BinaryOp op, const T* a, const T* b, T* out, std::int64_t count,
                      const BroadcastLayout& layout, cudaStream_t stream);

}  // namespace mg::cuda
