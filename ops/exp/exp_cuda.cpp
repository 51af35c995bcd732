// exp on CUDA, the host side: the shared unary engine (common/unary_cuda.h) with exp's functor.
#include "common/unary_cuda.h"
#include "exp/exp_functor.h"

namespace mg {

void exp_cuda(const KernelContext& ctx) { unary_cuda<ExpFn>(ctx); }

}  // namespace mg
