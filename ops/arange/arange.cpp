// arange: a factory, the evenly spaced values of [start, end), as torch.arange. No inputs, so
// nothing to register, record or differentiate: a plain function building a CPU tensor.
//   (start, end, step) -> out [N], N = ceil((end - start) / step), out_i = start + i * step
// Every check runs before anything is allocated; the fill is split across threads by index
// alone (the values do not depend on the thread count).
#include "arange/arange.h"

#include <cmath>
#include <limits>

#include "minigraph/error.h"
#include "minigraph/op.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// 2^40 elements (8 TiB of i64): past it a size is a typo or an overflow, not a range.
constexpr double kArangeMaxElements = 0x1p40;

// N, with the bounds and the step checked.
std::int64_t arange_count(double start, double end, double step) {
  MG_CHECK(std::isfinite(start), "arange", "start", "a finite number", "{}", start);
  MG_CHECK(std::isfinite(end), "arange", "end", "a finite number", "{}", end);
  MG_CHECK(std::isfinite(step) && step != 0, "arange", "step", "a finite, nonzero number", "{}",
           step);
  MG_CHECK(step > 0 ? end >= start : end <= start, "arange", "step",
           fmt::format("a step whose sign leads from start {} toward end {}", start, end), "{}",
           step);
  // end - start may pass the largest double (inf, refused below), and a quotient below the
  // smallest one rounds to 0 where one element (start) lies before end.
  double count = std::ceil((end - start) / step);
  if (count == 0 && end != start) count = 1;
  MG_CHECK(count <= kArangeMaxElements, "arange", "end",
           "at most 2^40 elements (ceil((end - start) / step))", "{} elements", count);
  return static_cast<std::int64_t>(count);
}

// out[i] = value(i) for every i, the indices split across threads.
template <typename T, typename Value>
void arange_fill(const Tensor& out, Value value) {
  T* po = out.data<T>();
  const std::int64_t n = out.numel();
  const int parts = threads_for(n);
  parallel_for(parts, [&](int part) {
    const Range r = part_range(n, parts, part);
    for (std::int64_t i = r.begin; i < r.end; ++i) po[i] = value(i);
  });
}

std::int64_t arange_whole(const char* argument, double v, DType dtype) {
  MG_CHECK(std::trunc(v) == v && holds_value(DType::i64, v), "arange", argument,
           fmt::format("a whole number (dtype {} is an integer dtype)", dtype_name(dtype)), "{}",
           v);
  return static_cast<std::int64_t>(v);
}

// Integers exactly: the last value checked in 64 bits (so no i * step on the way wraps), and
// both ends against T's range (the values between them are monotone).
template <typename T>
Tensor arange_integers(double start, double step, std::int64_t n, DType dtype) {
  const std::int64_t first = arange_whole("start", start, dtype);
  const std::int64_t stride = arange_whole("step", step, dtype);
  const std::int64_t last =
      n == 0 ? first
             : checked_add(first, checked_mul(n - 1, stride, "arange", "end"), "arange", "end");
  constexpr std::int64_t kLo = std::numeric_limits<T>::min(), kHi = std::numeric_limits<T>::max();
  MG_CHECK(first >= kLo && first <= kHi, "arange", "start",
           fmt::format("a value that {} holds", dtype_name(dtype)), "{}", first);
  MG_CHECK(last >= kLo && last <= kHi, "arange", "end",
           fmt::format("values that {} holds", dtype_name(dtype)), "last value {}", last);
  Tensor out = Tensor::empty({n}, dtype);
  arange_fill<T>(out, [&](std::int64_t i) { return static_cast<T>(first + i * stride); });
  return out;
}

// Floats in double, rounded once to T; both ends finite in T.
template <typename T>
Tensor arange_floats(double start, double step, std::int64_t n, DType dtype) {
  const double last = n == 0 ? start : start + static_cast<double>(n - 1) * step;
  constexpr double kMax = std::numeric_limits<T>::max();
  MG_CHECK(std::abs(start) <= kMax, "arange", "start",
           fmt::format("a value finite in {}", dtype_name(dtype)), "{}", start);
  MG_CHECK(std::abs(last) <= kMax, "arange", "end",
           fmt::format("values finite in {}", dtype_name(dtype)), "last value {}", last);
  Tensor out = Tensor::empty({n}, dtype);
  arange_fill<T>(
      out, [&](std::int64_t i) { return static_cast<T>(start + static_cast<double>(i) * step); });
  return out;
}

}  // namespace

Tensor arange(double start, double end, double step, DType dtype) {
  MG_CHECK(is_floating(dtype) || is_integer(dtype), "arange", "dtype",
           "an integer or float dtype (i32, i64, f32, f64)", "{}", dtype_name(dtype));
  const std::int64_t n = arange_count(start, end, step);
  if (is_integer(dtype)) {
    return dispatch_ids(dtype,
                        [&]<typename T>() { return arange_integers<T>(start, step, n, dtype); });
  }
  return dispatch_float(dtype,
                        [&]<typename T>() { return arange_floats<T>(start, step, n, dtype); });
}

Tensor arange(double end, DType dtype) { return arange(0, end, 1, dtype); }

}  // namespace mg
