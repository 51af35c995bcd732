// exp on the CPU: the shared unary engine (common/unary.h) with exp's functor.
#include <cmath>
#include <numbers>

#include "common/unary.h"
#include "exp/exp_functor.h"

namespace mg {

void exp_cpu(const KernelContext& ctx) { unary_cpu<ExpFn>(ctx); }

// The naive reference: one plain loop through the f64 accessors, computing e^x as 2^(x log2 e)
// (another formula than the kernels' std::exp, so a slip in either shows).
Tensor exp_reference(std::span<const Tensor> inputs, const std::any&) {
  const Tensor& x = inputs[0];
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    out.set_flat(i, std::exp2(x.at_flat(i) * std::numbers::log2e));
  }
  return out;
}

}  // namespace mg
