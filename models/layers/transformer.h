// The parts of a GPT-2 transformer block, with GPT-2's parameter names (so its checkpoints map
// by name). B batch, T positions, D = width, H heads, hd = D / H, F = the MLP's hidden width.
//   MLP:                 x [B, T, D] -> dropout(c_proj(gelu_tanh(c_fc(x)))) [B, T, D];
//                        c_fc D -> F, c_proj F -> D
//   CausalSelfAttention: x [B, T, D] -> resid_dropout(c_proj(attention(q, k, v))) [B, T, D];
//                        c_attn D -> 3D (q, k, v side by side), its heads split as views, causal
//   Block:               x + attn(ln_1(x)), then x + mlp(ln_2(x)) (pre-norm, two residuals)
#pragma once

#include <cstdint>

#include "minigraph/models/layers/dropout.h"
#include "minigraph/models/layers/linear.h"
#include "minigraph/module.h"

namespace mg {

struct BlockOptions {
  std::int64_t width = 768;     // D
  std::int64_t heads = 12;      // H, dividing D
  double mlp_ratio = 4.0;       // F = round(mlp_ratio * D)
  std::int64_t context = 1024;  // the longest T attention takes
  // GPT-2's initialisation: weights N(0, 0.02), the two projections into the residual stream
  // (attn.c_proj, mlp.c_proj) N(0, 0.02 / sqrt(2 * depth)) for a stack of `depth` blocks.
  std::int64_t depth = 1;
  // The four Linears are initialised from seed to seed + 3; the two Dropouts draw with seed + 4
  // and seed + 5: a stack of blocks spaces its blocks' seeds kSeedsPerBlock apart.
  std::uint64_t seed = 0;
  double dropout = 0.0;  // of each residual branch, in training mode
  static constexpr std::uint64_t kSeedsPerBlock = 6;
  DType dtype = DType::f32;

  std::int64_t hidden() const;  // F
  void validate() const;        // throws mg::Error naming the first bad field
};

class MLP : public Module {
 public:
  explicit MLP(const BlockOptions& options);
  Tensor forward(const Tensor& x) const;

  Linear c_fc;
  Linear c_proj;
  Dropout dropout;
};

class CausalSelfAttention : public Module {
 public:
  explicit CausalSelfAttention(const BlockOptions& options);
  Tensor forward(const Tensor& x) const;  // x [B, T, D], T <= context
  std::int64_t heads() const { return heads_; }

  Linear c_attn;
  Linear c_proj;
  Dropout resid_dropout;

 private:
  std::int64_t heads_;
  std::int64_t context_;
};

class Block : public Module {
 public:
  explicit Block(const BlockOptions& options);
  Tensor forward(const Tensor& x) const;

  LayerNorm ln_1;
  CausalSelfAttention attn;
  LayerNorm ln_2;
  MLP mlp;
};

}  // namespace mg
