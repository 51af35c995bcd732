#include "layers/embedding.h"

#include "minigraph/ops/embedding/embedding.h"
#include "minigraph/ops/position_embedding/position_embedding.h"

namespace mg {

Embedding::Embedding(std::int64_t rows, std::int64_t width, std::uint64_t seed, DType dtype)
    : weight_(init_normal_scaled({rows, width}, width, seed, dtype)) {
  register_parameter("weight", weight_);
}

Tensor Embedding::forward(const Tensor& ids) const { return embedding(weight_, ids); }

PositionEmbedding::PositionEmbedding(std::int64_t max_positions, std::int64_t width,
                                     std::uint64_t seed, DType dtype)
    : weight_(init_normal_scaled({max_positions, width}, width, seed, dtype)) {
  register_parameter("weight", weight_);
}

Tensor PositionEmbedding::forward(std::int64_t length, std::int64_t offset) const {
  return position_embedding(weight_, length, offset);
}

}  // namespace mg
