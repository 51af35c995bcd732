// Element types and devices: the two facts every tensor carries besides its shape.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

namespace mg {

// boolean: masks (comparisons give them; where and masked_fill read them), one byte each
// holding 0 or 1, as torch.bool.
enum class DType : std::uint8_t { f32, f64, i32, i64, boolean };

std::size_t dtype_size(DType dtype);
std::string_view dtype_name(DType dtype);
inline bool is_floating(DType dtype) { return dtype == DType::f32 || dtype == DType::f64; }
inline bool is_integer(DType dtype) { return dtype == DType::i32 || dtype == DType::i64; }
inline bool is_bool(DType dtype) { return dtype == DType::boolean; }

template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<std::int32_t>() {
  return DType::i32;
}
template <>
constexpr DType dtype_of<std::int64_t>() {
  return DType::i64;
}
static_assert(sizeof(bool) == 1, "DType::boolean is stored as one byte, as C++ bool");
template <>
constexpr DType dtype_of<bool>() {
  return DType::boolean;
}

enum class DeviceKind : std::uint8_t { cpu = 0, cuda = 1 };
inline constexpr int kNumDeviceKinds = 2;

struct Device {
  DeviceKind kind = DeviceKind::cpu;
  int index = 0;

  static constexpr Device cpu() { return {DeviceKind::cpu, 0}; }
  static constexpr Device cuda(int index = 0) { return {DeviceKind::cuda, index}; }
  bool is_cpu() const { return kind == DeviceKind::cpu; }
  std::string str() const;  // "cpu", "cuda:0"
  friend bool operator==(const Device&, const Device&) = default;
};

std::string_view device_kind_name(DeviceKind kind);

// Shapes are 64-bit: B*T*V passes 2^31 at ANDREA's sizes from batch 249.
// Whether `value` converts to `dtype` without undefined behaviour: always for f32 and f64;
// for i32 and i64, finite and inside the type's range after truncation toward zero; for
// boolean, 0 or 1.
bool holds_value(DType dtype, double value);

using Shape = std::vector<std::int64_t>;
// The largest size or offset: the edge every size check is tested at.
inline constexpr std::int64_t kInt64Max = std::numeric_limits<std::int64_t>::max();
// The element count; throws mg::Error for a negative size or a product past INT64_MAX (a
// wrapped count would allocate a small buffer for a huge shape).
std::int64_t shape_numel(const Shape& shape);
// The bytes of a tensor of that shape and dtype; throws mg::Error past INT64_MAX bytes.
std::int64_t shape_nbytes(const Shape& shape, DType dtype);
std::string shape_str(const Shape& shape);  // "[2, 3]"

// Size arithmetic that cannot wrap: a * b and a + b, or mg::Error naming `op` and `what`
// (e.g. "vocab_size × d_model") when the result passes INT64_MAX.
std::int64_t checked_mul(std::int64_t a, std::int64_t b, std::string_view op,
                         std::string_view what);
std::int64_t checked_add(std::int64_t a, std::int64_t b, std::string_view op,
                         std::string_view what);

}  // namespace mg
