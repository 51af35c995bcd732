// The strided copy of the CUDA backend (CudaBackend::copy_strided): one thread per element, its
// index unravelled into both layouts. Plain C++17 for nvcc.
//   N elements; shape [..S] (merged axes, at most kMaxCopyAxes); src and dst by their strides
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// Kernels carry the layout by value, so its size is fixed; the core's merging leaves two or
// three axes for any view minigraph makes, and more is refused with an mg::Error.
inline constexpr int kMaxCopyAxes = 12;

struct StridedCopyLayout {
  int rank;  // 0 is one element
  std::int64_t count;
  std::int64_t size[kMaxCopyAxes];
  std::int64_t dst_stride[kMaxCopyAxes];
  std::int64_t src_stride[kMaxCopyAxes];
};

// Queues the copy on `stream`; element_size is 1, 2, 4 or 8 bytes.
void strided_copy(void* dst, const void* src, int element_size, const StridedCopyLayout& layout,
                  cudaStream_t stream);

}  // namespace mg::cuda
