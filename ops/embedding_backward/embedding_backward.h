#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

struct EmbeddingBackwardAttrs {
  std::int64_t rows;  // V, the table's row count
};

// The table gradient of embedding: grad [..., D] scatter-added by ids [...] into a zero
// [rows, D]. Deterministic: rows hit by repeated ids sum in a fixed order.
Tensor embedding_backward(const Tensor& grad, const Tensor& ids, std::int64_t rows);

}  // namespace mg
