// sgd_update on CUDA, the device side: the update kernel instantiated for its functor.
//   N elements; param [N], grad [N], buf [N] -> out [N]
#include "common/update_cuda.cuh"
#include "sgd_update/sgd_update_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UPDATE(SgdUpdateFn)

}  // namespace mg::cuda
