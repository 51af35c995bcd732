#include "layers/embedding.h"

#include <cmath>
#include <vector>

#include "layers/init.h"
#include "minigraph/error.h"
#include "minigraph/ops/embedding/embedding.h"
#include "minigraph/ops/position_embedding/position_embedding.h"

namespace mg {

Embedding::Embedding(std::int64_t rows, std::int64_t width, std::uint64_t seed, DType dtype)
    : weight_(init_normal_scaled({rows, width}, width, seed, dtype)) {
  register_parameter("weight", weight_);
}

Tensor Embedding::forward(const Tensor& ids) const {
  return record_output(embedding(weight_, ids));
}

std::string_view position_kind_name(PositionKind kind) {
  return kind == PositionKind::learned ? "learned" : "sinusoidal";
}

PositionKind parse_position_kind(std::string_view name) {
  if (name == "learned") return PositionKind::learned;
  MG_CHECK(name == "sinusoidal", "PositionEmbedding", "positions", "learned or sinusoidal", "'{}'",
           name);
  return PositionKind::sinusoidal;
}

Tensor sinusoidal_positions(std::int64_t max_positions, std::int64_t width, DType dtype) {
  MG_CHECK(max_positions > 0 && width > 0, "sinusoidal_positions", "shape", "positive sizes",
           "[{}, {}]", max_positions, width);
  std::vector<double> table(static_cast<std::size_t>(
      checked_mul(max_positions, width, "sinusoidal_positions", "max_positions × width")));
  for (std::int64_t t = 0; t < max_positions; ++t) {
    for (std::int64_t i = 0; i < width; ++i) {
      const double frequency = std::pow(10000.0, -static_cast<double>(i - i % 2) / width);
      const double angle = static_cast<double>(t) * frequency;
      table[static_cast<std::size_t>(t * width + i)] =
          i % 2 == 0 ? std::sin(angle) : std::cos(angle);
    }
  }
  return Tensor::from_vector<double>(table, {max_positions, width}).to(dtype);
}

PositionEmbedding::PositionEmbedding(std::int64_t max_positions, std::int64_t width,
                                     std::uint64_t seed, DType dtype, PositionKind kind)
    : kind_(kind) {
  if (kind == PositionKind::learned) {
    weight_ = init_normal_scaled({max_positions, width}, width, seed, dtype);
    register_parameter("weight", weight_);
  } else {
    weight_ = sinusoidal_positions(max_positions, width, dtype);
    register_buffer("table", weight_);
  }
}

Tensor PositionEmbedding::forward(std::int64_t length, std::int64_t offset) const {
  return record_output(position_embedding(weight_, length, offset));
}

}  // namespace mg
