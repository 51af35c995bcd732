// scale's function, run by the shared unary engines on the CPU and CUDA
// (common/unary_functor.h); the factor is already in the element type.
#pragma once

#include "common/unary_functor.h"

namespace mg {

template <typename T>
struct ScaleFn {
  T factor;
  MG_HOST_DEVICE T operator()(T x) const { return factor * x; }
};

}  // namespace mg
