// Learned lookup tables as modules: a token embedding [V, D] and a position embedding [T, D].
#pragma once

#include <cstdint>

#include "minigraph/module.h"

namespace mg {

class Embedding : public Module {
 public:
  // weight [rows, width] ~ N(0, 1/sqrt(width)), seeded.
  Embedding(std::int64_t rows, std::int64_t width, std::uint64_t seed, DType dtype = DType::f32);
  Tensor forward(const Tensor& ids) const;  // ids [...] -> [..., width]
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

class PositionEmbedding : public Module {
 public:
  PositionEmbedding(std::int64_t max_positions, std::int64_t width, std::uint64_t seed,
                    DType dtype = DType::f32);
  Tensor forward(std::int64_t length, std::int64_t offset = 0) const;  // -> [length, width]
  const Tensor& weight() const { return weight_; }

 private:
  Tensor weight_;
};

}  // namespace mg
