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

// GCC's vector extension over T, 32 bytes (8 floats, 4 doubles): what max_lanes and the
// one-pass row loops compute in, as GCC vectorises no array of lanes holding a select or a
// mix of float and double. 32 bytes, not 64: GCC 12 lowers a 64-byte select in the AVX2 build
// to scalar code through the stack (softmax forward 163 ms against 78 on Zen 3); the AVX-512
// build runs a 32-byte vector as one ymm op. Passed by reference: by value, its ABI differs
// between ISA builds.
template <typename T>
struct VectorOf {
  typedef T type __attribute__((vector_size(32)));
};
template <typename T>
using Vector = typename VectorOf<T>::type;
template <typename T>
inline constexpr int kVectorLanes = sizeof(Vector<T>) / sizeof(T);

template <typename T>
void load_vector(Vector<T>& v, const T* from) {
  std::memcpy(&v, from, sizeof v);
}
template <typename T>
void store_vector(T* to, const Vector<T>& v) {
  std::memcpy(to, &v, sizeof v);
}
// acc += v's lanes as doubles (a float vector's two halves in turn).
inline void add_widened(Vector<double>& acc, const Vector<double>& v) { acc += v; }
inline void add_widened(Vector<double>& acc, const Vector<float>& v) {
  typedef float Half __attribute__((vector_size(16)));
  const Half low = __builtin_shufflevector(v, v, 0, 1, 2, 3);
  const Half high = __builtin_shufflevector(v, v, 4, 5, 6, 7);
  acc += __builtin_convertvector(low, Vector<double>);
  acc += __builtin_convertvector(high, Vector<double>);
}
// The sum of the lanes, pairwise.
inline double sum_of_lanes(const Vector<double>& v) { return (v[0] + v[1]) + (v[2] + v[3]); }

// The sum over j in [0, n) of x[j] after f(x[j]), f mapping in place whole Vectors (by
// reference, as the ABI of one by value differs between ISA builds) and single elements in
// the tail: four Vectors of lanes (32 floats), each lane summed in T, the lanes then added in
// double. Summing in T keeps the loop to one add a vector, where widening every element to
// double costs two conversions; it suits terms of like size (a row's deviations from a value
// of its own, their squares), each lane holding n / 32 of them.
template <typename T, typename F>
double sum_mapped(const T* x, std::int64_t n, F&& f) {
  using V = Vector<T>;
  constexpr int kWidth = kVectorLanes<T>;
  V acc[4] = {};
  std::int64_t j = 0;
  for (; j + 4 * kWidth <= n; j += 4 * kWidth) {
    for (int k = 0; k < 4; ++k) {
      V v;
      load_vector(v, x + j + k * kWidth);
      f(v);
      acc[k] += v;
    }
  }
  for (; j + kWidth <= n; j += kWidth) {
    V v;
    load_vector(v, x + j);
    f(v);
    acc[0] += v;
  }
  Vector<double> wide = {};
  for (const V& a : acc) add_widened(wide, a);
  double sum = sum_of_lanes(wide);
  for (; j < n; ++j) {
    T t = x[j];
    f(t);
    sum += static_cast<double>(t);
  }
  return sum;
}

// max over x[0], x[stride], ... (n elements), starting from `init`; a NaN is skipped (as
// x > max is false for it). Its lanes are one Vector, loaded whole at unit stride (GCC
// vectorises no load it assembles element by element); max is exact, so any order gives its
// bits.
template <typename T>
T max_lanes(const T* x, std::int64_t n, std::int64_t stride, T init) {
  using Lanes = Vector<T>;
  constexpr int kMaxLanes = kVectorLanes<T>;
  Lanes acc = Lanes{} + init;
  std::int64_t j = 0;
  for (; j + kMaxLanes <= n; j += kMaxLanes) {
    Lanes v;
    if (stride == 1) {
      load_vector(v, x + j);
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
