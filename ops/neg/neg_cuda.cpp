// neg on CUDA, the host side: the shared unary engine (common/unary_cuda.h) with neg's functor.
#include "common/unary_cuda.h"
#include "neg/neg_functor.h"

namespace mg {

void neg_cuda(const KernelContext& ctx) { unary_cuda<NegFn>(ctx); }

}  // namespace mg
