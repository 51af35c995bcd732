// neg's function, run by the shared unary engines on the CPU and CUDA (common/unary_functor.h).
#pragma once

#include "common/unary_functor.h"

namespace mg {

template <typename T>
struct NegFn {
  MG_HOST_DEVICE T operator()(T x) const { return -x; }
};

}  // namespace mg
