// sgd_update on CUDA, the host side: the update engine (common/update_cuda.h) with its functor.
#include "common/update_cuda.h"
#include "sgd_update/sgd_update.h"
#include "sgd_update/sgd_update_functor.h"

namespace mg {

void sgd_update_cuda(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<SgdUpdateAttrs>();
  update_cuda(ctx, [&]<typename T>() { return make_sgd_update_fn<T>(a); });
}

}  // namespace mg
