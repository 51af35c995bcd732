// CudaBackend::copy_strided's kernel (strided_copy.cuh): a grid-stride loop over the elements.
//   N = layout.count; dst and src read through their own strides over layout.size
#include "cuda_check.h"
#include "kernel_launch.cuh"
#include "strided_copy.cuh"

namespace mg::cuda {

namespace {

template <typename Word>
__global__ void strided_copy_kernel(Word* dst, const Word* src, StridedCopyLayout layout) {
  const std::int64_t step = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < layout.count; i += step) {
    std::int64_t rest = i, d = 0, s = 0;
    for (int axis = layout.rank - 1; axis >= 0; --axis) {
      const std::int64_t index = rest % layout.size[axis];
      rest /= layout.size[axis];
      d += index * layout.dst_stride[axis];
      s += index * layout.src_stride[axis];
    }
    dst[d] = src[s];
  }
}

template <typename Word>
void launch(void* dst, const void* src, const StridedCopyLayout& layout, cudaStream_t stream) {
  strided_copy_kernel<Word><<<blocks_for(layout.count), kThreadsPerBlock, 0, stream>>>(
      static_cast<Word*>(dst), static_cast<const Word*>(src), layout);
}

}  // namespace

void strided_copy(void* dst, const void* src, int element_size, const StridedCopyLayout& layout,
                  cudaStream_t stream) {
  if (layout.count == 0) return;
  switch (element_size) {
    case 1:
      launch<std::uint8_t>(dst, src, layout, stream);
      break;
    case 2:
      launch<std::uint16_t>(dst, src, layout, stream);
      break;
    case 4:
      launch<std::uint32_t>(dst, src, layout, stream);
      break;
    default:
      launch<std::uint64_t>(dst, src, layout, stream);
      break;
  }
  MG_CUDA_CHECK(cudaGetLastError());
}

}  // namespace mg::cuda
