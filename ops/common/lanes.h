// Row reductions with independent partial results (lanes) on the CPU: a single accumulator
// is a chain of dependent adds, one every 4 cycles; eight lanes let them overlap (and the
// compiler vectorise them) while keeping a fixed order, so the same bits on every run.
#pragma once

#include <cstdint>

namespace mg {

inline constexpr int kLanes = 8;

// sum over j in [0, n) of term(j), in double.
template <typename Term>
double sum_lanes(std::int64_t n, Term&& term) {
  double acc[kLanes] = {};
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) acc[k] += static_cast<double>(term(j + k));
  }
  for (; j < n; ++j) acc[0] += static_cast<double>(term(j));
  return ((acc[0] + acc[1]) + (acc[2] + acc[3])) + ((acc[4] + acc[5]) + (acc[6] + acc[7]));
}

// max over j in [0, n) of value(j), starting from `init`; a NaN is skipped (as x > max is
// false for it).
template <typename T, typename Value>
T max_lanes(std::int64_t n, T init, Value&& value) {
  T acc[kLanes];
  for (T& a : acc) a = init;
  std::int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int k = 0; k < kLanes; ++k) {
      const T v = value(j + k);
      acc[k] = v > acc[k] ? v : acc[k];
    }
  }
  for (; j < n; ++j) acc[0] = value(j) > acc[0] ? value(j) : acc[0];
  T max = acc[0];
  for (int k = 1; k < kLanes; ++k) max = acc[k] > max ? acc[k] : max;
  return max;
}

}  // namespace mg
