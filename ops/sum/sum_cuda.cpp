// sum on CUDA: sum_to's deterministic reduction (no atomics) written into out viewed in the
// keep shape, which has out's elements in out's order.
#include "minigraph/op.h"
#include "sum/reduce_dims.h"
#include "sum/sum.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

void sum_cuda(const KernelContext& ctx) {
  const Tensor& x = ctx.inputs[0];
  const auto& a = ctx.attrs_as<SumAttrs>();
  sum_to_cuda_into(x, ctx.out.view(reduce_shapes("sum", x.shape(), a.dims, a.keepdim).keep));
}

}  // namespace mg
