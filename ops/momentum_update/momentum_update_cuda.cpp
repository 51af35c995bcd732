// momentum_update on CUDA, the host side: the update engine (common/update_cuda.h) with its
// functor.
#include "common/update_cuda.h"
#include "momentum_update/momentum_update.h"
#include "momentum_update/momentum_update_functor.h"

namespace mg {

void momentum_update_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<MomentumUpdateAttrs>();
  update_cuda(ctx, [&]<typename T>() { return make_momentum_update_fn<T>(a); });
}

}  // namespace mg
