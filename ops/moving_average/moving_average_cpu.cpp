// moving_average on the CPU: the update engine (common/update.h) with its functor.
#include "common/update.h"
#include "moving_average/moving_average.h"
#include "moving_average/moving_average_functor.h"

namespace mg {

void moving_average_cpu(const KernelContext& ctx) {
  const auto& a = ctx.attrs_as<MovingAverageAttrs>();
  update_cpu(ctx, [&]<typename T>() { return make_moving_average_fn<T>(a.decay, a.squared); });
}

// The naive reference: the textbook formula, one plain loop through the f64 accessors.
Tensor moving_average_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const Tensor& avg = inputs[0];
  const Tensor& x = inputs[1];
  const auto& a = attrs_as<MovingAverageAttrs>("moving_average", attrs);
  Tensor out = Tensor::empty(avg.shape(), avg.dtype());
  for (std::int64_t i = 0; i < avg.numel(); ++i) {
    const double v = a.squared ? x.at_flat(i) * x.at_flat(i) : x.at_flat(i);
    out.set_flat(i, a.decay * avg.at_flat(i) + (1.0 - a.decay) * v);
  }
  return out;
}

}  // namespace mg
