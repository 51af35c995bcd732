// The kernel shared by mean's devices (mean.cpp): sum's reduction by the device's sum_to
// (sum_to/sum_to_kernels.h), then the division by the scale op, which runs on every device.
#pragma once

#include "minigraph/op.h"

namespace mg {

using SumToInto = void (*)(const Tensor& x, const Tensor& out);
void mean_with(const KernelContext& ctx, SumToInto sum_to_into);

}  // namespace mg
