// Row reductions with independent partial results (lanes) on the CPU: a single accumulator
// is a chain of dependent adds, one every 4 cycles; eight lanes let them overlap (and the
// compiler vectorise them) while keeping a fixed order, so the same bits on every run.
#pragma once

#include <cstdint>
#include <cstring>

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

// max over x[0], x[stride], ... (n elements), starting from `init`; a NaN is skipped (as
// x > max is false for it). The lanes are one vector of GCC's vector extension (64 bytes: 16
// floats), as GCC vectorises no select on an array of lanes, nor a load it assembles element
// by element; max is exact, so any order gives its bits.
template <typename T>
T max_lanes(const T* x, std::int64_t n, std::int64_t stride, T init) {
  typedef T Lanes __attribute__((vector_size(64)));
  constexpr int kMaxLanes = sizeof(Lanes) / sizeof(T);
  Lanes acc = Lanes{} + init;
  std::int64_t j = 0;
  for (; j + kMaxLanes <= n; j += kMaxLanes) {
    Lanes v;
    if (stride == 1) {
      std::memcpy(&v, x + j, sizeof v);
    } else {
      for (int k = 0; k < kMaxLanes; ++k) v[k] = x[(j + k) * stride];
    }
    acc = v > acc ? v : acc;
  }
  T max = acc[0];
  for (int k = 1; k < kMaxLanes; ++k) max = acc[k] > max ? acc[k] : max;
  for (; j < n; ++j) max = x[j * stride] > max ? x[j * stride] : max;
  return max;
}

}  // namespace mg
