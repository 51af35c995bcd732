// The binary elementwise engine on CUDA, the host side: pick the kernel for the shapes
// (elementwise_cuda.cu). Equal sizes are a plain elementwise pass; one operand repeated over
// the other's leading axes is the input layer's token + position case; anything else goes
// (views included) through strides, in the layout of broadcast_layout (size-1 axes dropped,
// contiguous axes merged, at most kMaxBroadcastGroups groups).
#include "common/elementwise_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/broadcast.h"
#include "common/broadcast_layout.h"
#include "common/elementwise.h"

namespace mg {

namespace {

// Below this many elements in the repeated operand, threads that each own one of its elements
// would idle; the strided kernel spreads such work better.
constexpr std::int64_t kMinRepeatedWidth = 256;

}  // namespace

void elementwise_binary_cuda(const KernelContext& ctx, BinaryOp op) {
  const Tensor& a = ctx.inputs[0];
  const Tensor& b = ctx.inputs[1];
  Tensor& out = ctx.out;
  const std::int64_t count = out.numel();
  cudaStream_t stream = cuda::activate(out.device()).stream();
  dispatch_float(out.dtype(), [&]<typename T>() {
    const bool dense = a.is_contiguous() && b.is_contiguous();
    if (dense && a.numel() == count && b.numel() == count) {
      cuda::binary_same_shape(op, a.data<T>(), b.data<T>(), out.data<T>(), count, stream);
      return;
    }
    const bool a_full = a.numel() == count && is_leading_broadcast(b.shape(), out.shape());
    const bool b_full = b.numel() == count && is_leading_broadcast(a.shape(), out.shape());
    const Tensor& part = a_full ? b : a;
    if (dense && (a_full || b_full) && part.numel() >= kMinRepeatedWidth) {
      const Tensor& full = a_full ? a : b;
      cuda::binary_repeated(op, a_full, full.data<T>(), part.data<T>(), out.data<T>(),
                            count / part.numel(), part.numel(), stream);
      return;
    }
    cuda::binary_broadcast(
        op, a.data_ptr<T>(), b.data_ptr<T>(), out.data<T>(), count,
        broadcast_layout(ctx.op.name, a.shape(), a.strides(), b.shape(), b.strides(), out.shape()),
        stream);
  });
}

}  // namespace mg
