// e^x written as arithmetic, so that a loop of it vectorises: std::exp is a libm call per
// element, which no compiler vectorises without -ffast-math, and exp is the cost of softmax
// and GELU. f64 keeps std::exp (its kernels are for checking, not speed).
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

#include "common/host_device.h"

namespace mg {

MG_HOST_DEVICE inline float float_from_bits(std::int32_t bits) {
#ifdef __CUDA_ARCH__
  return __int_as_float(bits);  // std::bit_cast is a host function to nvcc
#else
  return std::bit_cast<float>(bits);
#endif
}

// e^x for float within 2 ulp (Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2, e^r by a
// degree-7 polynomial, 2^n from the exponent bits). Branch-free: results below e^-87 (1.6e-38)
// are 0 (no subnormals), above 88.72 inf; NaN stays NaN.
MG_HOST_DEVICE inline float exp_vectorizable(float x) {
  constexpr float kLow = -87.0f, kHigh = 88.7228391f;
  const bool is_nan = x != x;
  float c = is_nan ? 0.0f : x;
  c = c < kLow ? kLow : (c > kHigh ? kHigh : c);
  // n = round(c / ln2): adding and subtracting 1.5 * 2^23 rounds to an integer (|n| <= 128).
  const float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
  float r = c - n * 0.693359375f;  // ln2 in two parts: r exact for |n| <= 128
  r = r - n * -2.12194440e-4f;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  p = p * r * r + r + 1.0f;
  // 2^(n-1) * 2: n reaches 128 near kHigh, past float's largest exponent of 127.
  const float half_scale = float_from_bits((static_cast<std::int32_t>(n) + 126) << 23);
  float result = p * half_scale * 2.0f;
  result = x < kLow ? 0.0f : result;
  result = x > kHigh ? float_from_bits(0x7f800000) : result;  // +inf
  return is_nan ? x : result;
}
MG_HOST_DEVICE inline double exp_vectorizable(double x) { return std::exp(x); }

}  // namespace mg
