// What an elementwise unary op hands the shared engines (common/unary.h on the CPU,
// common/unary_cuda.h on CUDA): a functor template over the element type,
//
//   template <typename T> struct NegFn { MG_HOST_DEVICE T operator()(T x) const { return -x; } };
//
// trivially copyable (its members, e.g. scale's factor, travel to the GPU by value) and
// written in C++17, since nvcc compiles it too. This header stays free of includes so that
// the op's _cpu.cpp (g++) and its .cu (nvcc) can both include the functor's header.
#pragma once

// __host__ __device__ under nvcc, nothing for the host compiler (common/elementwise_functors.h
// defines the same macro, identically). Inside a functor, __CUDA_ARCH__ tells the device pass
// (CUDA's math functions) from the host one (<cmath>).
#ifndef MG_HOST_DEVICE
#ifdef __CUDACC__
#define MG_HOST_DEVICE __host__ __device__
#else
#define MG_HOST_DEVICE
#endif
#endif
