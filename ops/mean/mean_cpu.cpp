// mean on the CPU: sum_to's threaded, deterministic reduction, then the division (mean.cpp).
#include "mean/mean.h"
#include "mean/mean_kernel.h"
#include "sum/sum.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

void mean_cpu(const KernelContext& ctx) { mean_with(ctx, sum_to_cpu_into); }

// The naive reference, written apart from the kernels (nothing from reduce_dims.h or sum_to):
// sum's reference, whose output holds x's elements split evenly among its own, divided by the
// count each one got, x.numel() / out.numel() (0 / 0 = NaN where that count is 0).
Tensor sum_reference(std::span<const Tensor> inputs, const std::any& attrs);

Tensor mean_reference(std::span<const Tensor> inputs, const std::any& attrs) {
  const auto& a = attrs_as<MeanAttrs>("mean", attrs);
  Tensor out = sum_reference(inputs, SumAttrs{a.dims, a.keepdim});
  if (out.numel() == 0) return out;
  const double count = static_cast<double>(inputs[0].numel() / out.numel());
  for (std::int64_t j = 0; j < out.numel(); ++j) out.set_flat(j, out.at_flat(j) / count);
  return out;
}

}  // namespace mg
