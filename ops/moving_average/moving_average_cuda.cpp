// moving_average on CUDA, the host side: the update engine (common/update_cuda.h) with its
// functor.
#include "common/update_cuda.h"
#include "moving_average/moving_average.h"
#include "moving_average/moving_average_functor.h"

namespace mg {

void moving_average_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<MovingAverageAttrs>();
  update_cuda(ctx, [&]<typename T>() { return make_moving_average_fn<T>(a.decay, a.squared); });
}

}  // namespace mg
