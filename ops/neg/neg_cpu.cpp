// neg on the CPU: the shared unary engine (common/unary.h) with neg's functor.
#include "common/unary.h"
#include "neg/neg_functor.h"

namespace mg {

void neg_cpu(const KernelContext& ctx) { unary_cpu<NegFn>(ctx); }

// The naive reference: one plain loop through the f64 accessors.
Tensor neg_reference(std::span<const Tensor> inputs, const std::any&) {
  const Tensor& x = inputs[0];
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) out.set_flat(i, -x.at_flat(i));
  return out;
}

}  // namespace mg
