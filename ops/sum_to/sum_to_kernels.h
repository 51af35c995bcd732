// sum_to's kernels on tensors rather than a KernelContext, for ops whose output is a sum_to
// under another shape: sum and mean over axes write x summed to the keepdim shape into a view
// of their output (ops/sum), so they share these reductions instead of copying them.
#pragma once

#include "minigraph/tensor.h"

namespace mg {

// out = x summed down to out's shape, which must broadcast to x's (unchecked: the caller's
// shape rule has checked it). Deterministic: the same bits on every run and thread count.
void sum_to_cpu_into(const Tensor& x, const Tensor& out);
void sum_to_cuda_into(const Tensor& x,
                      const Tensor& out);  // CUDA builds only; x and out on one GPU

}  // namespace mg
