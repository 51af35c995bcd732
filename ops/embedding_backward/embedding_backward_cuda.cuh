// The device launcher behind embedding_backward_cuda (embedding_backward_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mg::cuda {

// Device scratch that scatter_add_rows needs for `count` ids over `rows` table rows and rows of
// `width` elements of `element_size` bytes.
std::size_t scatter_add_scratch_bytes(std::int64_t count, std::int64_t rows, std::int64_t width,
                                      std::size_t element_size);

// out[v, :] = sum of grad[i, :] over i with ids[i] == v, added in increasing i: the same bits on
// every run. `out` must be zero; ids already checked to lie in [0, rows).
//   grad [count, width], ids [count], out [rows, width]; scratch: scatter_add_scratch_bytes.
template <typename T, typename Id>
void scatter_add_rows(const T* grad, const Id* ids, T* out, std::int64_t count, std::int64_t rows,
                      std::int64_t width, void* scratch, cudaStream_t stream);

}  // namespace mg::cuda
