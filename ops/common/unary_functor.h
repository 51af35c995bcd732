// What an elementwise unary op hands the shared engines (common/unary.h on the CPU,
// common/unary_cuda.h on CUDA): a functor template over the element type,
//
//   template <typename T> struct NegFn { MG_HOST_DEVICE T operator()(T x) const { return -x; } };
//
// trivially copyable (its members, e.g. scale's factor, travel to the GPU by value) and
// written in C++17, since nvcc compiles it too. This header includes nothing else so that
// the op's _cpu.cpp (g++) and its .cu (nvcc) can both include the functor's header.
#pragma once

#include "common/host_device.h"
