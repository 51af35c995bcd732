// One row of logits as the CPU kernels of cross_entropy and cross_entropy_backward see it
// (private to the ops library; the naive references do not use it).
#pragma once

#include <cmath>
#include <cstdint>

namespace mg {

// softmax(row)_v = exp(row[v] - max) / sum_exp. Subtracting the max keeps exp() <= 1, so
// logits of any magnitude neither overflow nor lose the sum; sum_exp adds up in double.
template <typename T>
struct RowSoftmax {
  T max;
  double sum_exp;
};

// classes >= 1. A NaN anywhere in the row makes sum_exp NaN.
template <typename T>
RowSoftmax<T> row_softmax(const T* row, std::int64_t classes) {
  T max = row[0];
  for (std::int64_t v = 1; v < classes; ++v) max = row[v] > max ? row[v] : max;
  double sum_exp = 0;
  for (std::int64_t v = 0; v < classes; ++v) sum_exp += static_cast<double>(std::exp(row[v] - max));
  return {max, sum_exp};
}

// logsumexp(row) - row[target], written (max - row[target]) + log(sum_exp): the difference of
// two large logits is exact, so the loss keeps its digits when the logits are 1e4 and more.
template <typename T>
double row_loss(const T* row, const RowSoftmax<T>& s, std::int64_t target) {
  return (static_cast<double>(s.max) - static_cast<double>(row[target])) + std::log(s.sum_exp);
}

}  // namespace mg
