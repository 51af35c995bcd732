// neg on CUDA, the device side: the shared unary kernel instantiated for neg's functor.
//   N elements; x [N] -> out [N]
#include "common/unary_cuda.cuh"
#include "neg/neg_functor.h"

namespace mg::cuda {

MG_INSTANTIATE_UNARY(NegFn)

}  // namespace mg::cuda
