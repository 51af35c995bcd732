// div on the CPU: the binary elementwise engine (common/elementwise.cpp) with a / b, and the
// naive reference that the harness checks it against.
//   a [..A], b [..B] -> out [broadcast(A, B)]
#include "common/binary_reference.h"
#include "common/elementwise.h"
#include "minigraph/op.h"

namespace mg {

void div_cpu(const KernelContext& ctx) { elementwise_binary_cpu(ctx, BinaryOp::div); }

// The naive reference: NumPy's rule and plain loops (common/binary_reference.h), apart from
// the kernel above.
Tensor div_reference(std::span<const Tensor> inputs, const std::any&) {
  return binary_reference(inputs, [](auto x, auto y) { return x / y; });
}

}  // namespace mg
