// ANDREA-120M, a GPT-2-style language model: input layer -> N transformer blocks -> final
// LayerNorm -> output head. Zero blocks is the lesson model: the input layer and the head alone
// (no final LayerNorm). Legend: V vocabulary, D = d_model, T = context (positions), B batch,
// N blocks, H heads, F = round(mlp_ratio × D) the MLP's hidden width.
#pragma once

#include <cstdint>

#include "minigraph/dtype.h"
#include "minigraph/models/layers/embedding.h"  // PositionKind

namespace mg::andrea {

struct AndreaConfig {
  std::int64_t vocab_size = 8449;  // V
  std::int64_t d_model = 768;      // D
  std::int64_t context = 1024;     // T_max
  DType dtype = DType::f32;
  PositionKind positions = PositionKind::learned;  // sinusoidal: a fixed table, no parameters
  // Parameters are initialised from seed (token table), seed + 1 (positions), seed + 2 (head),
  // and block i from seed + 3 + 4i to seed + 6 + 4i; dropout masks are keyed past those.
  std::uint64_t seed = 120;
  static constexpr std::int64_t kMaxBlocks = 1024;
  std::int64_t blocks = 0;  // N, at most kMaxBlocks
  std::int64_t heads = 12;  // H, dividing D (read when N > 0)
  double mlp_ratio = 4.0;
  // The probability of dropping an element of the embeddings' sum and of each block's two
  // residual branches (GPT-2's embd_pdrop and resid_pdrop), in training mode only. Attention
  // weights take none: the fused attention has no dropout.
  double dropout = 0.0;
  // logits = x · tok_embᵀ: the head is the token table (GPT-2's), with no parameter of its own.
  bool tied_head = false;

  // ANDREA-120M: 15 GPT-2 blocks at D = 768, 120,083,712 parameters.
  static AndreaConfig andrea_120m() { return {.blocks = 15}; }
  // ANDREA-120M's sizes without blocks: the lesson's input layer and untied head.
  static AndreaConfig lesson() { return {}; }
  void validate() const;  // throws mg::Error naming the first bad field

  std::int64_t token_embedding_parameters() const { return vocab_size * d_model; }
  std::int64_t position_embedding_parameters() const {
    return positions == PositionKind::learned ? context * d_model : 0;
  }
  std::int64_t embedding_parameters() const {
    return token_embedding_parameters() + position_embedding_parameters();
  }
  std::int64_t head_parameters() const { return tied_head ? 0 : d_model * vocab_size; }
  std::int64_t block_parameters() const;  // one block's (validate() first)
  std::int64_t parameters() const;        // the whole model's (validate() first)
};

}  // namespace mg::andrea
