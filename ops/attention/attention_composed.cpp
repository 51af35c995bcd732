// Attention composed of separate ops, as written before the fused op existed: the scores
// [B, H, T, T] and their softmax are kept for autograd. The fused op is held to it.
#include <cmath>

#include "arange/arange.h"
#include "attention/attention.h"
#include "binary/binary.h"
#include "matmul/matmul.h"
#include "softmax/softmax.h"
#include "unary/unary.h"
#include "where/where.h"

namespace mg {

Tensor scaled_dot_product_attention_composed(const Tensor& query, const Tensor& key,
                                             const Tensor& value, const AttentionOptions& options) {
  const double factor = options.scale.value_or(1 / std::sqrt(static_cast<double>(query.size(-1))));
  Tensor scores = scale(matmul(query, key, {.transpose_b = true}), factor);
  if (options.is_causal) {
    const Tensor positions = arange(static_cast<double>(query.size(-2)), query.dtype());
    const Tensor future = gt(positions.unsqueeze(0), positions.unsqueeze(1));  // key > query
    scores = masked_fill(scores, future, -INFINITY);
  }
  if (options.attn_mask) {
    const Tensor& mask = *options.attn_mask;
    scores = mask.dtype() == DType::boolean
                 ? masked_fill(scores, eq(mask.to(query.dtype()), 0.0), -INFINITY)
                 : add(scores, mask);
  }
  return matmul(softmax(scores, -1), value);
}

}  // namespace mg
