// add on CUDA: the binary elementwise engine (common/elementwise_cuda.cpp) with a + b.
#include "common/elementwise.h"

namespace mg {

void add_cuda(const KernelContext& ctx) { elementwise_binary_cuda(ctx, BinaryOp::add); }

}  // namespace mg
