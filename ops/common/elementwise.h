// One engine for the binary elementwise ops with NumPy broadcasting (add, sub, mul, div): the
// shape and dtype rule, the error cases, and the kernels per device, parameterised by the
// function (BinaryOp). An op built on it adds only its function, backward rule, cases and
// naive reference.
#pragma once

#include <any>
#include <span>
#include <vector>

#include "common/elementwise_functors.h"
#include "minigraph/op.h"

namespace mg {

// The rule of every binary elementwise op: a and b floating-point, of one dtype, with shapes
// that broadcast; the output has the broadcast shape. Throws mg::Error naming self.
OutputSpec elementwise_binary_infer(const OpDef& self, std::span<const Tensor> in,
                                    const std::any& attrs);

// The error cases of that rule: shapes that do not broadcast, mixed dtypes, an integer input.
std::vector<ErrorCase> elementwise_binary_error_cases();

// out = fn(a, b) on the CPU (elementwise.cpp) and on CUDA (elementwise_cuda.cpp, CUDA builds
// only). out may be a or b itself (each element is read before the same index is written).
void elementwise_binary_cpu(const KernelContext& ctx, BinaryOp op);
void elementwise_binary_cuda(const KernelContext& ctx, BinaryOp op);

}  // namespace mg
