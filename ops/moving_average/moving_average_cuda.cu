// moving_average on CUDA, the device side: the update kernel instantiated for its functor.
//   N elements; avg [N], x [N] -> out [N]
#include "common/update_cuda.cuh"
#include "moving_average/moving_average_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UPDATE(MovingAverageFn)

}  // namespace mg::cuda
