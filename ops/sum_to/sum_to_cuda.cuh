// The device launcher behind sum_to_cuda (sum_to_cuda.cpp): plain pointers and sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>

namespace mg::cuda {

inline constexpr int kMaxAxisGroups = 8;

// Axes of x flattened into one index: index -> offset through mixed-radix sizes and strides.
struct AxisGroup {
  int rank = 1;
  std::int64_t size[kMaxAxisGroups] = {1};
  std::int64_t stride[kMaxAxisGroups] = {0};
  std::int64_t count = 1;  // product of the sizes
};

// x's axes split into those kept in out (in out's order) and those summed away.
struct ReduceLayout {
  AxisGroup kept;
  AxisGroup reduced;
};

// Device scratch that sum_to_launch needs for this layout and element size.
std::size_t sum_to_scratch_bytes(const ReduceLayout& layout, std::size_t element_size);

// out[j] = sum over r of x[kept(j) + reduced(r)], in an order fixed by the layout alone (so the
// same bits on every run). T: float or double.
template <typename T>
void sum_to_launch(const T* x, T* out, const ReduceLayout& layout, void* scratch,
                   cudaStream_t stream);

}  // namespace mg::cuda
