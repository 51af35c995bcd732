// scale on the CPU: the shared unary engine (common/unary.h) with scale's functor, its factor
// converted once to the element type.
#include "common/unary.h"
#include "scale/scale.h"
#include "scale/scale_functor.h"

namespace mg {

void scale_cpu(const KernelContext& ctx) {
  const double factor = ctx.attrs_as<ScaleAttrs>().factor;
  unary_cpu(ctx, [&]<typename T>() { return ScaleFn<T>{static_cast<T>(factor)}; });
}

// The naive reference: one plain loop through the f64 accessors, x times the factor.
Tensor scale_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& x = inputs[0];
  const double factor = attrs_as<ScaleAttrs>("scale", attrs).factor;
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) out.set_flat(i, x.at_flat(i) * factor);
  return out;
}

}  // namespace mg
