// scale on CUDA, the device side: the shared unary kernel instantiated for scale's functor.
//   N elements; x [N], factor -> out [N]
#include "common/unary_cuda.cuh"
#include "scale/scale_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UNARY(ScaleFn)

}  // namespace mg::cuda
