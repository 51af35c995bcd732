// broadcast_to on CUDA, the host side: size-1 axes of out are dropped and axes contiguous in
// both out and x merged (so the layout fits kMaxRepeatRank), then one kernel writes out.
#include "broadcast_to/broadcast_to_cuda.cuh"

#include "backends/cuda/cuda_backend.h"
#include "common/broadcast.h"
#include "minigraph/op.h"

namespace mg {

namespace {

cuda::RepeatLayout repeat_layout(const Shape& x, const Shape& out) {
  const auto stride_x = broadcast_strides(x, out);
  cuda::RepeatLayout layout{};
  int rank = 0;
  for (std::size_t axis = 0; axis < out.size(); ++axis) {
    if (out[axis] == 1) continue;
    if (rank > 0 && layout.stride_x[rank - 1] == stride_x[axis] * out[axis]) {
      layout.size[rank - 1] *= out[axis];
    } else {
      MG_CHECK(rank < cuda::kMaxRepeatRank, "broadcast_to", "shape",
               fmt::format("a broadcast of at most {} axis groups on CUDA", cuda::kMaxRepeatRank),
               "x {} to {}", shape_str(x), shape_str(out));
      layout.size[rank] = out[axis];
      ++rank;
    }
    layout.stride_x[rank - 1] = stride_x[axis];
  }
  if (rank == 0) {  // a single element
    layout.size[0] = 1;
    rank = 1;
  }
  layout.rank = rank;
  return layout;
}

}  // namespace

void broadcast_to_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  Tensor& out = ctx.out;
  cudaStream_t stream = cuda::activate(out.device()).stream();
  const auto layout = repeat_layout(x.shape(), out.shape());
  dispatch_float(out.dtype(), [&]<typename T>() {
    cuda::broadcast_to_launch(x.data<T>(), out.data<T>(), out.numel(), layout, stream);
  });
}

}  // namespace mg
