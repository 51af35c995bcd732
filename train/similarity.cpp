// Norms, dot products, cosines and nearest rows of an embedding table, in f64 on the host.
//   table [V, D]
#include "similarity.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "minigraph/error.h"

namespace mg::train {

EmbeddingTable::EmbeddingTable(const Tensor& table) {
  MG_CHECK(table.defined() && table.dim() == 2 && is_floating(table.dtype()), "EmbeddingTable",
           "table", "a 2-D float table [V, D]", "{}",
           table.defined()
               ? fmt::format("{} {}", dtype_name(table.dtype()), shape_str(table.shape()))
               : "an undefined tensor");
  rows_ = table.size(0);
  width_ = table.size(1);
  values_ = table.to(Device::cpu()).to(DType::f64).to_vector<double>();
  norms_.resize(static_cast<std::size_t>(rows_));
  for (std::int64_t r = 0; r < rows_; ++r)
    norms_[static_cast<std::size_t>(r)] = std::sqrt(dot(r, r));
}

void EmbeddingTable::check_id(std::int64_t id, const char* argument) const {
  MG_CHECK(id >= 0 && id < rows_, "EmbeddingTable", argument,
           fmt::format("a token id in [0, {})", rows_), "{}", id);
}

double EmbeddingTable::norm(std::int64_t id) const {
  check_id(id, "id");
  return norms_[static_cast<std::size_t>(id)];
}

double EmbeddingTable::dot(std::int64_t a, std::int64_t b) const {
  check_id(a, "a");
  check_id(b, "b");
  const double* x = values_.data() + a * width_;
  const double* y = values_.data() + b * width_;
  double sum = 0;
  for (std::int64_t d = 0; d < width_; ++d) sum += x[d] * y[d];
  return sum;
}

double EmbeddingTable::cosine(std::int64_t a, std::int64_t b) const {
  const double product = dot(a, b);
  const double lengths = norms_[static_cast<std::size_t>(a)] * norms_[static_cast<std::size_t>(b)];
  return lengths == 0 ? 0.0 : product / lengths;
}

std::vector<Neighbour> EmbeddingTable::nearest(std::int64_t id, std::int64_t k, bool cosine) const {
  check_id(id, "id");
  MG_CHECK(k >= 0, "EmbeddingTable", "k", "a count >= 0", "{}", k);
  std::vector<Neighbour> all;
  all.reserve(static_cast<std::size_t>(rows_));
  for (std::int64_t r = 0; r < rows_; ++r) {
    if (r == id) continue;
    const double score = cosine ? this->cosine(id, r) : dot(id, r);
    // A NaN row (a diverged run) sorts last: the comparison below needs a strict order.
    all.push_back({r, std::isnan(score) ? -std::numeric_limits<double>::infinity() : score});
  }
  const auto count = static_cast<std::size_t>(std::min<std::int64_t>(k, rows_ - 1));
  std::partial_sort(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(count), all.end(),
                    [](const Neighbour& x, const Neighbour& y) {
                      return x.score != y.score ? x.score > y.score : x.id < y.id;
                    });
  all.resize(count);
  return all;
}

std::vector<Neighbour> EmbeddingTable::nearest_by_cosine(std::int64_t id, std::int64_t k) const {
  return nearest(id, k, true);
}

std::vector<Neighbour> EmbeddingTable::nearest_by_dot(std::int64_t id, std::int64_t k) const {
  return nearest(id, k, false);
}

}  // namespace mg::train
