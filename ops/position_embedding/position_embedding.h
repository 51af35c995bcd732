#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

struct PositionEmbeddingAttrs {
  std::int64_t length;      // T, positions wanted
  std::int64_t offset = 0;  // first position (for continuing a sequence)
};

// Rows offset .. offset + T - 1 of a learned position table [T_max, D] -> [T, D].
Tensor position_embedding(const Tensor& table, std::int64_t length, std::int64_t offset = 0);

}  // namespace mg
