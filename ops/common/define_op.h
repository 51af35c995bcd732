// What an op folder uses to define itself: its kernels per device in one line, and the lookup
// of a built-in op by the functions that call it.
#pragma once

#include <string_view>

#include "minigraph/op.h"

// MG_DECLARE_KERNELS(add) declares add_cpu and add_cuda; MG_KERNELS(add) is the op's
// DeviceKernels: add_cpu, and add_cuda in CUDA builds only (null otherwise, so a CPU build
// never references it). The one place that knows which builds have which backends.
#define MG_DECLARE_KERNELS(name)               \
  void name##_cpu(const ::mg::KernelContext&); \
  void name##_cuda(const ::mg::KernelContext&)
#ifdef MG_WITH_CUDA
#define MG_CUDA_KERNEL(fn) (fn)
#else
#define MG_CUDA_KERNEL(fn) nullptr
#endif
#define MG_KERNELS(name) ::mg::device_kernels(name##_cpu, MG_CUDA_KERNEL(name##_cuda))

namespace mg {

// A built-in op's definition, registering the built-in ops first if nobody has yet. Each op's
// function keeps it in a function-local static: one lookup per process.
const OpDef& builtin_op(std::string_view name);

}  // namespace mg
