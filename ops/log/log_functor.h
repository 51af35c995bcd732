// log's function, run by the shared unary engines on the CPU and CUDA
// (common/unary_functor.h): std::log on the host, CUDA's logf / log on the device.
#pragma once

#include <cmath>
#include <type_traits>

#include "common/unary_functor.h"

namespace mg {

template <typename T>
struct LogFn {
  MG_HOST_DEVICE T operator()(T x) const {
#ifdef __CUDA_ARCH__
    // Qualified: unqualified log in namespace mg would find mg::log (a Tensor op).
    if constexpr (std::is_same_v<T, float>) {
      return ::logf(x);
    } else {
      return ::log(x);
    }
#else
    return std::log(x);
#endif
  }
};

}  // namespace mg
