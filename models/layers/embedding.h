// Learned lookup tables as modules: a token embedding [V, D] and a position embedding [T, D].
#pragma once

#include <cstdint>
#include <string_view>

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

// How positions are represented: a learned table (GPT-2's and ANDREA's choice), or the fixed
// sinusoidal table of "Attention Is All You Need" (no parameters):
//   table[t, 2i] = sin(t / 10000^(2i/D)),  table[t, 2i+1] = cos(t / 10000^(2i/D)).
enum class PositionKind { learned, sinusoidal };
std::string_view position_kind_name(PositionKind kind);  // "learned", "sinusoidal"
PositionKind parse_position_kind(std::string_view name);  // throws mg::Error naming both kinds

class PositionEmbedding : public Module {
 public:
  // learned: a parameter "weight" ~ N(0, 1/sqrt(width)), seeded. sinusoidal: a buffer "table"
  // (the seed is unused), which weight() returns too.
  PositionEmbedding(std::int64_t max_positions, std::int64_t width, std::uint64_t seed,
                    DType dtype = DType::f32, PositionKind kind = PositionKind::learned);
  Tensor forward(std::int64_t length, std::int64_t offset = 0) const;  // -> [length, width]
  const Tensor& weight() const { return weight_; }
  PositionKind kind() const { return kind_; }

 private:
  PositionKind kind_;
  Tensor weight_;
};

// The sinusoidal table [max_positions, width], computed in f64 and converted to dtype.
Tensor sinusoidal_positions(std::int64_t max_positions, std::int64_t width,
                            DType dtype = DType::f32);

}  // namespace mg
