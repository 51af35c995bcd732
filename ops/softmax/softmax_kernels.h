// What the softmax rows' kernels share: their rows along the op's dim (common/axis_rows.h) and
// the kernels' declarations.
#pragma once

#include <cstdint>

#include "common/axis_rows.h"
#include "minigraph/op.h"

namespace mg {

// x's rows along the op's dim (already checked by the shape rule).
AxisRows softmax_rows(const Shape& shape, const std::any& attrs);

// The four rows of the table, as kernels: a forward (Log: log_softmax) reads x, a backward
// reads grad_out and the result.
template <bool Log>
void softmax_forward_cpu(const KernelContext& ctx);
template <bool Log>
void softmax_backward_cpu(const KernelContext& ctx);
template <bool Log>
void softmax_forward_cuda(const KernelContext& ctx);
template <bool Log>
void softmax_backward_cuda(const KernelContext& ctx);

}  // namespace mg
