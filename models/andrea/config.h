// ANDREA-120M, a GPT-2-style language model: minigraph builds its input layer and its untied
// output head. Legend: V vocabulary, D = d_model, T = context (positions), B batch.
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
  std::uint64_t seed = 120;  // parameters are initialised from seed, seed + 1, seed + 2

  static AndreaConfig andrea_120m() { return {}; }
  void validate() const;  // throws mg::Error for non-positive sizes or a non-float dtype

  std::int64_t token_embedding_parameters() const { return vocab_size * d_model; }
  std::int64_t position_embedding_parameters() const {
    return positions == PositionKind::learned ? context * d_model : 0;
  }
  std::int64_t embedding_parameters() const {
    return token_embedding_parameters() + position_embedding_parameters();
  }
  std::int64_t head_parameters() const { return d_model * vocab_size; }
};

}  // namespace mg::andrea
