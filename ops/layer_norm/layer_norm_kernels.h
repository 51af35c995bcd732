// What layer_norm's kernels share: the rows of x and the kernels' declarations.
//   N rows of D = prod(normalized_shape); x [N, D], weight [D], bias [D] -> y [N, D];
//   saved: mean [N], rstd [N]
//   backward: grad_out [N, D], x [N, D], weight [D], mean [N], rstd [N]
//     -> [N * D + 2 * D]: dx [N, D], then dweight [D], then dbias [D]
#pragma once

#include <cstdint>

#include "layer_norm/layer_norm.h"
#include "minigraph/op.h"

namespace mg {

struct LayerNormRows {
  std::int64_t n = 0, d = 1;
  Shape leading;  // x's leading axes: the shape of mean and rstd
};
LayerNormRows layer_norm_rows(const Tensor& x, const std::any& attrs);

// Rows per chunk of the weight and bias gradients: each chunk's partial sums are computed on
// their own, then added in chunk order, so the bits depend on neither threads nor blocks.
inline constexpr std::int64_t kLayerNormRowsPerChunk = 64;

void layer_norm_cpu(const KernelContext& ctx);
void layer_norm_backward_cpu(const KernelContext& ctx);
void layer_norm_cuda(const KernelContext& ctx);
void layer_norm_backward_cuda(const KernelContext& ctx);

}  // namespace mg
