// What training did to an embedding table, made concrete: the length of a token's row (its
// magnitude), the dot product and the cosine of two rows, and a token's nearest rows by either.
// Legend: V rows (tokens), D = d_model.
#pragma once

#include <cstdint>
#include <vector>

#include "minigraph/tensor.h"

namespace mg::train {

struct Neighbour {
  std::int64_t id;
  double score;  // a cosine in [-1, 1], or a dot product
};

// Rows of an embedding table [V, D] (f32 or f64, any device), read once into f64 on the host.
class EmbeddingTable {
 public:
  explicit EmbeddingTable(const Tensor& table);
  std::int64_t rows() const { return rows_; }
  std::int64_t width() const { return width_; }
  double norm(std::int64_t id) const;  // |e_id|
  double dot(std::int64_t a, std::int64_t b) const;
  double cosine(std::int64_t a, std::int64_t b) const;  // 0 when either row is all zero
  // The k rows with the largest cosine (or dot product) with row `id`, `id` itself left out,
  // best first; ties go to the smaller id. k is capped at V - 1.
  std::vector<Neighbour> nearest_by_cosine(std::int64_t id, std::int64_t k) const;
  std::vector<Neighbour> nearest_by_dot(std::int64_t id, std::int64_t k) const;

 private:
  void check_id(std::int64_t id, const char* argument) const;
  std::vector<Neighbour> nearest(std::int64_t id, std::int64_t k, bool cosine) const;
  std::int64_t rows_ = 0, width_ = 0;
  std::vector<double> values_;  // [V, D]
  std::vector<double> norms_;   // [V]
};

}  // namespace mg::train
