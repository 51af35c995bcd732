// mean on CUDA: sum_to's deterministic reduction (no atomics), then the division (mean.cpp).
#include "mean/mean.h"
#include "mean/mean_kernel.h"
#include "sum_to/sum_to_kernels.h"

namespace mg {

void mean_cuda(const KernelContext& ctx) { mean_with(ctx, sum_to_cuda_into); }

}  // namespace mg
