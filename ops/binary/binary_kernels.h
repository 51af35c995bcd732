// The elementwise binary family's functors and its engine's kernels. A functor is the one
// definition of an op's function: the CPU engine (binary_cpu.cpp), the CUDA one
// (binary_cuda.cu) and the naive reference (binary.cpp) all run it. A new op: its functor
// here, its name in MG_BINARY_FUNCTORS (each engine instantiates its kernel for every functor
// listed), and its row in binary.cpp.
//   a [..A], b [..B] -> out [broadcast(A, B)]
#pragma once

#include "common/host_device.h"
#include "minigraph/op.h"

namespace mg {

struct AddFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x + y;
  }
};
struct SubFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x - y;
  }
};
struct MulFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x * y;
  }
};
struct DivFn {
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return x / y;
  }
};

#define MG_BINARY_FUNCTORS(X) X(AddFn) X(SubFn) X(MulFn) X(DivFn)

// fn with its operands exchanged: the fast paths pass the full-size operand first, so when
// that operand is b they run Flipped{fn}, keeping a - b and a / b in the user's order.
template <typename Fn>
struct Flipped {
  Fn fn;
  template <typename T>
  MG_HOST_DEVICE T operator()(T x, T y) const {
    return fn(y, x);
  }
};

// out = Fn(a, b). out may be a or b itself (each element is read before the same index is
// written). binary_cuda exists in CUDA builds only.
template <typename Fn>
void binary_cpu(const KernelContext& ctx);
template <typename Fn>
void binary_cuda(const KernelContext& ctx);

}  // namespace mg
