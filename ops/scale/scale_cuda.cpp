// scale on CUDA, the host side: the shared unary engine (common/unary_cuda.h) with scale's
// functor, its factor converted once to the element type.
#include "common/unary_cuda.h"
#include "scale/scale.h"
#include "scale/scale_functor.h"

namespace mg {

void scale_cuda(const KernelContext& ctx) {
  const double factor = ctx.attrs_as<ScaleAttrs>().factor;
  unary_cuda(ctx, [&]<typename T>() { return ScaleFn<T>{static_cast<T>(factor)}; });
}

}  // namespace mg
