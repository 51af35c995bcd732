#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

struct PositionEmbeddingBackwardAttrs {
  std::int64_t rows;        // T_max, the table's row count
  std::int64_t offset = 0;  // where the T gradient rows go
};

// The table gradient of position_embedding: grad [T, D] placed at rows offset..offset+T-1 of
// a zero [rows, D].
Tensor position_embedding_backward(const Tensor& grad, std::int64_t rows, std::int64_t offset);

}  // namespace mg
