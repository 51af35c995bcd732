// The binary elementwise functions of add, sub, mul and div, shared by the CPU engine
// (elementwise.cpp) and the CUDA one (elementwise_cuda.cu): the one thing those ops' kernels
// differ in. Plain C++ that nvcc also compiles for the device.
#pragma once

#include "common/host_device.h"

namespace mg {

// Which function an op's kernel runs; the engines turn it into a functor (visit_binary_op) so
// the function is inlined into their loops.
enum class BinaryOp { add, sub, mul, div };

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

// Calls visitor(functor) with the functor of `op`.
template <typename Visitor>
void visit_binary_op(BinaryOp op, Visitor&& visitor) {
  switch (op) {
    case BinaryOp::add:
      return visitor(AddFn{});
    case BinaryOp::sub:
      return visitor(SubFn{});
    case BinaryOp::mul:
      return visitor(MulFn{});
    case BinaryOp::div:
      return visitor(DivFn{});
  }
}

}  // namespace mg
