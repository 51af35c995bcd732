// sgd_update on the CPU: the update engine (common/update.h) with its functor.
#include "common/update.h"
#include "sgd_update/sgd_update.h"
#include "sgd_update/sgd_update_functor.h"

namespace mg {

void sgd_update_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<SgdUpdateAttrs>();
  update_cpu(ctx, [&]<typename T>() { return make_sgd_update_fn<T>(a); });
}

// The naive reference: torch.optim.SGD's documented step, one plain loop through the f64
// accessors.
Tensor sgd_update_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& param = inputs[0];
  const Tensor& grad = inputs[1];
  const Tensor& buf = inputs[2];
  const auto& a = attrs_as<SgdUpdateAttrs>("sgd_update", attrs);
  Tensor out = Tensor::empty(param.shape(), param.dtype());
  for (std::int64_t i = 0; i < param.numel(); ++i) {
    double d = grad.at_flat(i) + a.weight_decay * param.at_flat(i);
    if (a.momentum != 0) d = a.nesterov ? d + a.momentum * buf.at_flat(i) : buf.at_flat(i);
    out.set_flat(i, param.at_flat(i) - a.lr * d);
  }
  return out;
}

}  // namespace mg
