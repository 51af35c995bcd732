// mul on CUDA: the binary elementwise engine (common/elementwise_cuda.cpp) with a * b.
#include "common/elementwise.h"

namespace mg {

void mul_cuda(const KernelContext& ctx) { elementwise_binary_cuda(ctx, BinaryOp::mul); }

}  // namespace mg
