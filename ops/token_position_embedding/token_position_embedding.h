#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

struct TokenPositionEmbeddingAttrs {
  std::int64_t offset = 0;  // position of the first id (for continuing a sequence)
};

// The fused input of a language model, in one pass over the output:
//   out[..., t, :] = tok_table[ids[..., t], :] + pos_table[offset + t, :]
// tok_table [V, D], pos_table [T_max, D], integer ids [..., T] -> [..., T, D]. The same as
// add(embedding(tok_table, ids), position_embedding(pos_table, T, offset)), without the two
// intermediate tensors. Ids outside [0, V) and offset + T > T_max throw.
Tensor token_position_embedding(const Tensor& tok_table, const Tensor& pos_table, const Tensor& ids,
                                std::int64_t offset = 0);

}  // namespace mg
