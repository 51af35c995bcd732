// exp's function, run by the shared unary engines on the CPU and CUDA
// (common/unary_functor.h): std::exp on the host, CUDA's expf / exp on the device.
#pragma once

#include <cmath>
#include <type_traits>

#include "common/unary_functor.h"

namespace mg {

template <typename T>
struct ExpFn {
  MG_HOST_DEVICE T operator()(T x) const {
#ifdef __CUDA_ARCH__
    // Qualified: unqualified exp in namespace mg would find mg::exp (a Tensor op).
    if constexpr (std::is_same_v<T, float>) {
      return ::expf(x);
    } else {
      return ::exp(x);
    }
#else
    return std::exp(x);
#endif
  }
};

}  // namespace mg
