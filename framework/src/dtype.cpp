#include "minigraph/dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "minigraph/error.h"

namespace mg {

std::size_t dtype_size(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return 4;
    case DType::f64:
      return 8;
    case DType::i32:
      return 4;
    case DType::i64:
      return 8;
    case DType::boolean:
      return 1;
  }
  return 0;
}

std::string_view dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "f32";
    case DType::f64:
      return "f64";
    case DType::i32:
      return "i32";
    case DType::i64:
      return "i64";
    case DType::boolean:
      return "bool";
  }
  return "?";
}

std::string_view device_kind_name(DeviceKind kind) {
  return kind == DeviceKind::cpu ? "cpu" : "cuda";
}

std::string Device::str() const {
  return is_cpu() ? std::string("cpu") : fmt::format("cuda:{}", index);
}

std::int64_t shape_numel(const Shape& shape) {
  for (auto d : shape) {
    MG_CHECK(d >= 0, "tensor", "shape", "non-negative sizes", "{}", shape_str(shape));
  }
  std::int64_t n = 1;
  bool overflow = false;
  for (auto d : shape) overflow = overflow || __builtin_mul_overflow(n, d, &n);
  // A zero size makes the product 0 however large the others are: no overflow then.
  const bool empty = std::find(shape.begin(), shape.end(), 0) != shape.end();
  MG_CHECK(empty || !overflow, "tensor", "shape", "at most 2^63 - 1 elements",
           "{} (the element count passes INT64_MAX)", shape_str(shape));
  return empty ? 0 : n;
}

std::int64_t shape_nbytes(const Shape& shape, DType dtype) {
  const std::int64_t numel = shape_numel(shape);
  std::int64_t bytes = 0;
  MG_CHECK(!__builtin_mul_overflow(numel, static_cast<std::int64_t>(dtype_size(dtype)), &bytes),
           "tensor", "shape", "at most 2^63 - 1 bytes",
           "{} of {} ({} elements of {} bytes pass INT64_MAX)", shape_str(shape), dtype_name(dtype),
           numel, dtype_size(dtype));
  return bytes;
}

bool holds_value(DType dtype, double value) {
  if (is_floating(dtype)) return true;
  if (is_bool(dtype)) return value == 0 || value == 1;
  if (!std::isfinite(value)) return false;
  if (dtype == DType::i32) return value > -2147483649.0 && value < 2147483648.0;
  return value >= -0x1p63 && value < 0x1p63;  // i64: 2^63 itself is one past the largest
}

std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view op,
                         std::string_view what) {
  std::int64_t result = 0;
  MG_CHECK(!__builtin_mul_overflow(a, b, &result), std::string(op), std::string(what),
           "a product of at most 2^63 - 1", "{} × {} (passes INT64_MAX)", a, b);
  return result;
}

std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view op,
                         std::string_view what) {
  std::int64_t result = 0;
  MG_CHECK(!__builtin_add_overflow(a, b, &result), std::string(op), std::string(what),
           "a sum of at most 2^63 - 1", "{} + {} (passes INT64_MAX)", a, b);
  return result;
}

std::string shape_str(const Shape& shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace mg
