// log on CUDA, the host side: the shared unary engine (common/unary_cuda.h) with log's functor.
#include "common/unary_cuda.h"
#include "log/log_functor.h"

namespace mg {

void log_cuda(const KernelContext& ctx) { unary_cuda<LogFn>(ctx); }

}  // namespace mg
