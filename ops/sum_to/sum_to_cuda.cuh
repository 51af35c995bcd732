// The device launcher behind sum_to_cuda (sum_to_cuda.cpp): plain pointers and sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

#include "common/broadcast_layout.h"  // ReduceLayout, AxisGroup

namespace mg::cuda {

// Device scratch that sum_to_launch needs for this layout and element size.
std::size_t sum_to_scratch_bytes(const ReduceLayout& layout, std::size_t element_size);

// out[j] = sum over r of x[kept(j) + reduced(r)], in an order fixed by the layout alone (so the
// same bits on every run). T: float or double.
template <typename T>
void sum_to_launch(const T* x, T* out, const ReduceLayout& layout, void* scratch,
                   cudaStream_t stream);

}  // namespace mg::cuda
