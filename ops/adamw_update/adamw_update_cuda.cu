// adamw_update on CUDA, the device side: the update kernel instantiated for its functor.
//   N elements; param [N], m [N], v [N] -> out [N]
#include "adamw_update/adamw_update_functor.h"
#include "common/update_cuda.cuh"

namespace mg::cuda {

MG_INSTANTIATE_UPDATE(AdamWUpdateFn)

}  // namespace mg::cuda
