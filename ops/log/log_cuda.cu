// log on CUDA, the device side: the shared unary kernel instantiated for log's functor.
//   N elements; x [N] -> out [N]
#include "common/unary_cuda.cuh"
#include "log/log_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UNARY(LogFn)

}  // namespace mg::cuda
