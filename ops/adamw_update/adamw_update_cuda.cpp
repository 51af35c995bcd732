// adamw_update on CUDA, the host side: the update engine (common/update_cuda.h) with its
// functor.
#include "adamw_update/adamw_update.h"
#include "adamw_update/adamw_update_functor.h"
#include "common/update_cuda.h"

namespace mg {

void adamw_update_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<AdamWUpdateAttrs>();
  update_cuda(ctx, [&]<typename T>() { return make_adamw_update_fn<T>(a); });
}

}  // namespace mg
