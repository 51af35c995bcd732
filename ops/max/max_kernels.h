// What the max rows' kernels share: the selection rule and the kernels' declarations. They walk
// x's rows along `dim` (common/axis_rows.h); row r's output (value, index, or gradient) is
// element r of the output, in either keepdim shape.
//   x [R rows of N] -> out [R] (values, or i64 indices); saved: indices [R] (max, min)
//   backward: grad_out [R], indices [R] -> grad_x [R rows of N]
#pragma once

#include <cstdint>

#include "common/axis_rows.h"
#include "common/host_device.h"
#include "minigraph/op.h"

namespace mg {

// Whether `candidate`, met after `best` in a row, takes its place: strictly more extreme (the
// first of equals stays), or the row's first NaN; nothing replaces a NaN.
template <bool Min, typename T>
MG_HOST_DEVICE inline bool max_replaces(T candidate, T best) {
  if (best != best) return false;
  return candidate != candidate || (Min ? candidate < best : candidate > best);
}

// The index of max_backward's `position`-th index, outside [0, n): the same error on every
// device.
[[noreturn]] void throw_bad_max_index(std::int64_t index, std::int64_t position, const Shape& shape,
                                      std::int64_t n);

// The forward rows as kernels: Min picks min/argmin over max/argmax; Indices writes the i64
// indices as the output (argmax, argmin), else the values, and the indices into
// KernelContext::saved when a backward can follow.
template <bool Min, bool Indices>
void max_forward_cpu(const KernelContext& ctx);
template <bool Min, bool Indices>
void max_forward_cuda(const KernelContext& ctx);
void max_backward_cpu(const KernelContext& ctx);
void max_backward_cuda(const KernelContext& ctx);

}  // namespace mg
