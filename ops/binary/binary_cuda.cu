// The binary elementwise engine on CUDA: 16-byte loads for equal shapes; for the [B, T, D] +
// [T, D] of the input layer (one operand repeated over the other's leading axes), each thread
// loads its element of the repeated operand once and applies it to every repeat; any other
// broadcast, views included, maps each output index to both inputs through strides, in the
// layout of broadcast_layout (size-1 axes dropped, contiguous axes merged, at most
// kMaxBroadcastGroups groups). The functor is a template argument of every kernel.
//   N out elements; a [..A], b [..B] -> out [broadcast(A, B)]
// No __restrict__ on the pointers: out may be one of the inputs (apply_op_into), which
// restrict would declare impossible. Each thread reads its elements before writing the same
// index, so the kernels are correct that way.
#include "backends/cuda/cuda_backend.h"
#include "backends/cuda/cuda_check.h"
#include "backends/cuda/kernel_launch.cuh"
#include "binary/binary_kernels.h"
#include "common/broadcast.h"
#include "common/broadcast_layout.h"

namespace mg {

namespace {

// Repeats handled by separate rows of blocks (gridDim.y): enough to fill the GPU with B = 8.
constexpr std::int64_t kMaxRepeatBlocks = 64;
// Below this many elements in the repeated operand, threads that each own one of its elements
// would idle; the strided kernel spreads such work better.
constexpr std::int64_t kMinRepeatedWidth = 256;

using cuda::blocks_for;
using cuda::global_stride;
using cuda::global_thread;
using cuda::kThreadsPerBlock;

// fn on each lane of a 16-byte vector, or on one element.
template <typename Fn, typename T>
__device__ T lanes(Fn fn, T x, T y) {
  return fn(x, y);
}
template <typename Fn>
__device__ float4 lanes(Fn fn, float4 x, float4 y) {
  return {fn(x.x, y.x), fn(x.y, y.y), fn(x.z, y.z), fn(x.w, y.w)};
}
template <typename Fn>
__device__ double2 lanes(Fn fn, double2 x, double2 y) {
  return {fn(x.x, y.x), fn(x.y, y.y)};
}

template <typename Element, typename Fn>
__global__ void same_shape_kernel(const Element* a, const Element* b, Element* out,
                                  std::int64_t count, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    out[i] = lanes(fn, a[i], b[i]);
  }
}

template <typename Element, typename Fn>
__global__ void repeated_kernel(const Element* full, const Element* part, Element* out,
                                std::int64_t repeats, std::int64_t width, Fn fn) {
  for (std::int64_t j = global_thread(); j < width; j += global_stride()) {
    const Element p = part[j];
    for (std::int64_t r = blockIdx.y; r < repeats; r += gridDim.y) {
      out[r * width + j] = lanes(fn, full[r * width + j], p);
    }
  }
}

template <typename T, typename Out, typename Fn>
__global__ void broadcast_kernel(const T* a, const T* b, Out* out, std::int64_t count,
                                 BroadcastLayout layout, Fn fn) {
  for (std::int64_t i = global_thread(); i < count; i += global_stride()) {
    std::int64_t rest = i, offset_a = 0, offset_b = 0;
    for (int axis = layout.rank - 1; axis > 0; --axis) {
      const std::int64_t outer = rest / layout.size[axis];
      const std::int64_t index = rest - outer * layout.size[axis];
      offset_a += index * layout.stride_a[axis];
      offset_b += index * layout.stride_b[axis];
      rest = outer;
    }
    out[i] = fn(a[offset_a + rest * layout.stride_a[0]], b[offset_b + rest * layout.stride_b[0]]);
  }
}

// out[i] = fn(a[i], b[i])                        a, b, out [count]
template <typename T, typename Fn>
void launch_same_shape(const T* a, const T* b, T* out, std::int64_t count, Fn fn,
                       cudaStream_t stream) {
  if (cuda::vec16_ok<T>(count, a, b, out)) {
    using V = cuda::Vec16<T>;
    const std::int64_t vectors = count / cuda::kVecLanes<T>;
    same_shape_kernel<<<blocks_for(vectors), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(a), reinterpret_cast<const V*>(b), reinterpret_cast<V*>(out),
        vectors, fn);
  } else {
    same_shape_kernel<<<blocks_for(count), kThreadsPerBlock, 0, stream>>>(a, b, out, count, fn);
  }
}

// out[r, j] = fn(full[r, j], part[j])            full, out [repeats, width], part [width]
template <typename T, typename Fn>
void launch_repeated(const T* full, const T* part, T* out, std::int64_t repeats, std::int64_t width,
                     Fn fn, cudaStream_t stream) {
  const auto repeat_blocks = static_cast<unsigned int>(std::min(repeats, kMaxRepeatBlocks));
  if (cuda::vec16_ok<T>(width, full, part, out)) {
    using V = cuda::Vec16<T>;
    const std::int64_t vectors = width / cuda::kVecLanes<T>;
    repeated_kernel<<<dim3(blocks_for(vectors), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        reinterpret_cast<const V*>(full), reinterpret_cast<const V*>(part),
        reinterpret_cast<V*>(out), repeats, vectors, fn);
  } else {
    repeated_kernel<<<dim3(blocks_for(width), repeat_blocks), kThreadsPerBlock, 0, stream>>>(
        full, part, out, repeats, width, fn);
  }
}

// out[i] = fn(a[.], b[.]) through both inputs' strides   a [..A], b [..B] -> out [shape]
template <typename T, typename Out, typename Fn>
void launch_broadcast(std::string_view op, const Tensor& a, const Tensor& b, Out* out,
                      const Shape& shape, Fn fn, cudaStream_t stream) {
  const BroadcastLayout layout =
      broadcast_layout(op, a.shape(), a.strides(), b.shape(), b.strides(), shape);
  broadcast_kernel<<<blocks_for(shape_numel(shape)), kThreadsPerBlock, 0, stream>>>(
      a.data_ptr<T>(), b.data_ptr<T>(), out, shape_numel(shape), layout, fn);
}

}  // namespace

template <typename Fn>
void binary_cuda(const KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  const std::int64_t count = out.numel();
  if (count == 0) return;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(a.dtype(), [&]<typename T>() {  // the operands' dtype: a comparison's out is bool
    if constexpr (kIsComparison<Fn>) {  // bool out, narrower than a and b: no 16-byte lanes
      launch_broadcast<T>(ctx.op.name, a, b, out.data<bool>(), out.shape(), Fn{}, stream);
    } else {
      const bool dense = a.is_contiguous() && b.is_contiguous();
      const bool a_full = a.numel() == count && is_leading_broadcast(b.shape(), out.shape());
      const bool b_full = b.numel() == count && is_leading_broadcast(a.shape(), out.shape());
      const Tensor& part = a_full ? b : a;
      if (dense && a.numel() == count && b.numel() == count) {
        launch_same_shape(a.data<T>(), b.data<T>(), out.data<T>(), count, Fn{}, stream);
      } else if (dense && (a_full || b_full) && part.numel() >= kMinRepeatedWidth) {
        const Tensor& full = a_full ? a : b;
        const std::int64_t repeats = count / part.numel();
        if (a_full) {
          launch_repeated(full.data<T>(), part.data<T>(), out.data<T>(), repeats, part.numel(),
                          Fn{}, stream);
        } else {
          launch_repeated(full.data<T>(), part.data<T>(), out.data<T>(), repeats, part.numel(),
                          Flipped<Fn>{}, stream);
        }
      } else {
        launch_broadcast<T>(ctx.op.name, a, b, out.data<T>(), out.shape(), Fn{}, stream);
      }
    }
    MG_CUDA_CHECK(cudaGetLastError());
  });
}

#define MG_INSTANTIATE(Fn) template void binary_cuda<Fn>(const KernelContext&);
MG_BINARY_FUNCTORS(MG_INSTANTIATE)
#undef MG_INSTANTIATE

}  // namespace mg
