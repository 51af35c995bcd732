// add on CUDA, the host side: pick the kernel for the shapes (add_cuda.cu). Equal sizes are a
// plain elementwise add; one operand repeated over the other's leading axes is the input
// layer's token + position add; anything else goes through strides, after dropping size-1
// axes and merging axes that are contiguous in both inputs (so the layout fits 8 axes).
#include "add/add_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/broadcast.h"
#include "minigraph/op.h"

namespace mg {

namespace {

// Below this many elements in the repeated operand, threads that each own one of its elements
// would idle; the strided kernel spreads such adds better.
constexpr std::int64_t kMinRepeatedWidth = 256;

cuda::BroadcastLayout broadcast_layout(const Shape& a, const Shape& b, const Shape& out) {
  const auto stride_a = broadcast_strides(a, out), stride_b = broadcast_strides(b, out);
  cuda::BroadcastLayout layout{};
  int rank = 0;
  for (std::size_t axis = 0; axis < out.size(); ++axis) {
    if (out[axis] == 1) continue;
    const bool merges = rank > 0 && layout.stride_a[rank - 1] == stride_a[axis] * out[axis] &&
                        layout.stride_b[rank - 1] == stride_b[axis] * out[axis];
    if (merges) {
      layout.size[rank - 1] *= out[axis];
    } else {
      MG_CHECK(
          rank < cuda::kMaxBroadcastRank, "add", "b",
          fmt::format("a broadcast of at most {} axis groups on CUDA", cuda::kMaxBroadcastRank),
          "shapes {} and {}", shape_str(a), shape_str(b));
      layout.size[rank] = out[axis];
      ++rank;
    }
    layout.stride_a[rank - 1] = stride_a[axis];
    layout.stride_b[rank - 1] = stride_b[axis];
  }
  if (rank == 0) {  // a single element
    layout.size[0] = 1;
    rank = 1;
  }
  layout.rank = rank;
  return layout;
}

}  // namespace

void add_cuda(const KernelContext& ctx) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  const std::int64_t count = out.numel();
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(out.dtype(), [&]<typename T>() {
    if (a.numel() == count && b.numel() == count) {
      cuda::add_same_shape(a.data<T>(), b.data<T>(), out.data<T>(), count, stream);
      return;
    }
    const bool a_full = a.numel() == count && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = b.numel() == count && is_leading_broadcast(a.shape(), out.shape());
    const Tensor& part = a_full ? b : a;
    if ((a_full || b_full) && part.numel() >= kMinRepeatedWidth) {
      // Addition commutes bit for bit, so which operand was first does not matter.
      const Tensor& full = a_full ? a : b;
      cuda::add_repeated(full.data<T>(), part.data<T>(), out.data<T>(), count / part.numel(),
                         part.numel(), stream);
      return;
    }
    cuda::add_broadcast(a.data<T>(), b.data<T>(), out.data<T>(), count,
                        broadcast_layout(a.shape(), b.shape(), out.shape()), stream);
  });
}

}  // namespace mg
