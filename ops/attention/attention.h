#pragma once

#include <optional>

#include "minigraph/tensor.h"

namespace mg {

// How scaled_dot_product_attention attends, as torch.nn.functional.scaled_dot_product_attention
// spells it (no dropout).
struct AttentionOptions {
  // A mask broadcastable to [B, H, T, T] (query row, key column), for the non-causal case:
  // bool (true: the key takes part, as PyTorch's) or additive, in the inputs' float dtype
  // (added to the scaled scores; -inf hides a key). It gets no gradient, so one that requires
  // grad is refused.
  std::optional<Tensor> attn_mask;
  // Query t sees keys 0..t only (the mask GPT-2 uses), built into the kernel.
  bool is_causal = false;
  // The scores' factor; default 1 / sqrt(hd).
  std::optional<double> scale;
  // The model's context: a T past it is refused (0: no limit).
  std::int64_t max_length = 0;
};

// softmax(scale * q kᵀ + mask) v per batch and head, fused: the [T, T] scores never exist
// whole. q, k, v [B, H, T, hd] -> [B, H, T, hd]; views with unit-stride rows are read without
// a copy (the heads of one [B, T, 3D] projection, split and permuted). The forward walks tiles
// of keys with an online softmax and saves each row's logsumexp; the backward recomputes the
// probabilities tile by tile (FlashAttention). A row that sees no key (a mask hiding all)
// gives zeros and passes no gradient; a NaN in a score makes its row NaN.
Tensor scaled_dot_product_attention(const Tensor& query, const Tensor& key, const Tensor& value,
                                    const AttentionOptions& options = {});

// The same attention composed of separate ops (matmul, scale, the mask, softmax, matmul), with
// the [B, H, T, T] probabilities kept for the backward: the reference the fused op is held to.
Tensor scaled_dot_product_attention_composed(const Tensor& query, const Tensor& key,
                                             const Tensor& value,
                                             const AttentionOptions& options = {});

// The fused backward, from the forward's output and its rows' logsumexp [B, H, T]:
//   P = exp(scale q kᵀ + mask - logsumexp),  dP = grad_out vᵀ,  D = rowsum(grad_out * out),
//   dv = Pᵀ grad_out,  dS = P * (dP - D),  dq = scale dS k,  dk = scale dSᵀ q.
// The op writes them into one flat tensor [3 * B * H * T * hd]; this returns views of it.
// Not differentiable itself.
struct AttentionGrads {
  Tensor query, key, value;
};
AttentionGrads scaled_dot_product_attention_backward(const Tensor& grad_out, const Tensor& query,
                                                     const Tensor& key, const Tensor& value,
                                                     const Tensor& out, const Tensor& logsumexp,
                                                     const AttentionOptions& options = {});

}  // namespace mg
