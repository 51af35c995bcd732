// momentum_update on CUDA, the device side: the update kernel instantiated for its functor.
//   N elements; buf [N], grad [N], param [N] -> out [N]
#include "common/update_cuda.cuh"
#include "momentum_update/momentum_update_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UPDATE(MomentumUpdateFn)

}  // namespace mg::cuda
