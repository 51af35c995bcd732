// The elementwise unary family's functors and its engine's kernels. A functor is the one
// definition of an op's function: the CPU engine (unary_cpu.cpp), the CUDA one (unary_cuda.cu)
// and the naive reference (unary.cpp) all run it, in the element type T. A functor with
// attributes builds itself from them (`static Fn from(const std::any& attrs)`, converting its
// numbers to T once); others are default-constructed. A new op: its functor here, its name in
// MG_UNARY_FUNCTORS (each engine instantiates its kernel for every functor listed), and its row
// in unary.cpp.
//   N elements; x [..X] -> out [..X]
#pragma once

#include <cmath>

#include "common/host_device.h"
#include "minigraph/op.h"
#include "unary/unary.h"

namespace mg {

template <typename T>
struct NegFn {
  MG_HOST_DEVICE T operator()(T x) const { return -x; }
};

template <typename T>
struct ScaleFn {
  T factor;
  static ScaleFn from(const std::any& attrs) {
    return {static_cast<T>(attrs_as<ScaleAttrs>("scale", attrs).factor)};
  }
  MG_HOST_DEVICE T operator()(T x) const { return factor * x; }
};

// std::exp and std::log: <cmath> on the host; on the device nvcc maps them to CUDA's expf / exp
// and logf / log. Qualified: unqualified exp in namespace mg would find mg::exp (a Tensor op).
template <typename T>
struct ExpFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::exp(x); }
};

template <typename T>
struct LogFn {
  MG_HOST_DEVICE T operator()(T x) const { return std::log(x); }
};

#define MG_UNARY_FUNCTORS(X) X(NegFn) X(ScaleFn) X(ExpFn) X(LogFn)

// The functor of Fn for element type T and the op's attributes.
template <template <typename> class Fn, typename T>
Fn<T> make_unary_fn(const std::any& attrs) {
  if constexpr (requires { Fn<T>::from(attrs); }) {
    return Fn<T>::from(attrs);
  } else {
    return Fn<T>{};
  }
}

// out[i] = Fn(x[i]); x and out may be the same memory (never partly overlapping). unary_cuda
// exists in CUDA builds only.
template <template <typename> class Fn>
void unary_cpu(const KernelContext& ctx);
template <template <typename> class Fn>
void unary_cuda(const KernelContext& ctx);

}  // namespace mg
