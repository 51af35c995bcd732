// exp on CUDA, the device side: the shared unary kernel instantiated for exp's functor.
//   N elements; x [N] -> out [N]
#include "common/unary_cuda.cuh"
#include "exp/exp_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UNARY(ExpFn)

}  // namespace mg::cuda
