// What the softmax rows' kernels share: the geometry of rows along an axis and the kernels'
// declarations. x [..., N, ...] along `dim` is R = outer * inner rows of N elements each, row
// r = (o, i) starting at o * N * inner + i with a stride of inner between its elements (1, and
// contiguous rows, when dim is the last axis).
#pragma once

#include <cstdint>

#include "common/host_device.h"
#include "minigraph/op.h"

namespace mg {

struct SoftmaxRows {
  std::int64_t outer = 1, n = 1, inner = 1;
  MG_HOST_DEVICE std::int64_t count() const { return outer * inner; }
  MG_HOST_DEVICE std::int64_t start(std::int64_t row) const {
    return row / inner * n * inner + row % inner;
  }
};
// x's rows along the op's dim (already checked by the shape rule).
SoftmaxRows softmax_rows(const Shape& shape, const std::any& attrs);

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
