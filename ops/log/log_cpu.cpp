// log on the CPU: the shared unary engine (common/unary.h) with log's functor.
#include <cmath>
#include <numbers>

#include "common/unary.h"
#include "log/log_functor.h"

namespace mg {

void log_cpu(const KernelContext& ctx) { unary_cpu<LogFn>(ctx); }

// The naive reference: one plain loop through the f64 accessors, computing ln x as
// log2(x) ln 2 (another formula than the kernels' std::log, so a slip in either shows).
Tensor log_reference(std::span<const Tensor> inputs, const std::any&) {
  const Tensor& x = inputs[0];
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  for (std::int64_t i = 0; i < x.numel(); ++i) {
    out.set_flat(i, std::log2(x.at_flat(i)) * std::numbers::ln2);
  }
  return out;
}

}  // namespace mg
