// momentum_update on the CPU: the update engine (common/update.h) with its functor.
#include "common/update.h"
#include "momentum_update/momentum_update.h"
#include "momentum_update/momentum_update_functor.h"

namespace mg {

void momentum_update_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<MomentumUpdateAttrs>();
  update_cpu(ctx, [&]<typename T>() { return make_momentum_update_fn<T>(a); });
}

// The naive reference: torch.optim.SGD's documented buffer update, one plain loop through the
// f64 accessors.
Tensor momentum_update_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& buf = inputs[0];
  const Tensor& grad = inputs[1];
  const Tensor& param = inputs[2];
  const auto& a = attrs_as<MomentumUpdateAttrs>("momentum_update", attrs);
  Tensor out = Tensor::empty(buf.shape(), buf.dtype());
  for (std::int64_t i = 0; i < buf.numel(); ++i) {
    const double d = grad.at_flat(i) + a.weight_decay * param.at_flat(i);
    out.set_flat(i, a.first_step ? d : a.momentum * buf.at_flat(i) + (1.0 - a.dampening) * d);
  }
  return out;
}

}  // namespace mg
