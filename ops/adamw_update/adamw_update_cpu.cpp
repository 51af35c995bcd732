// adamw_update on the CPU: the update engine (common/update.h) with its functor.
#include <cmath>

#include "adamw_update/adamw_update.h"
#include "adamw_update/adamw_update_functor.h"
#include "common/update.h"

namespace mg {

void adamw_update_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<AdamWUpdateAttrs>();
  update_cpu(ctx, [&]<typename T>() { return make_adamw_update_fn<T>(a); });
}

// The naive reference: the textbook formula (decoupled decay, bias-corrected moments), one
// plain loop through the f64 accessors.
Tensor adamw_update_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& param = inputs[0];
  const Tensor& m = inputs[1];
  const Tensor& v = inputs[2];
  const auto& a = attrs_as<AdamWUpdateAttrs>("adamw_update", attrs);
  Tensor out = Tensor::empty(param.shape(), param.dtype());
  for (std::int64_t i = 0; i < param.numel(); ++i) {
    const double m_hat = m.at_flat(i) / a.beta1_correction;
    const double v_hat = v.at_flat(i) / a.beta2_correction;
    const double decayed = param.at_flat(i) - a.lr * a.weight_decay * param.at_flat(i);
    out.set_flat(i, decayed - a.lr * m_hat / (std::sqrt(v_hat) + a.eps));
  }
  return out;
}

}  // namespace mg
