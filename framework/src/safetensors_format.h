// Internals of the safetensors reader and writer (safetensors*.cpp): the format's dtype table,
// the half-precision conversions, and the header validation that open() and parse() share.
// Not installed: users see minigraph/safetensors.h only.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "minigraph/safetensors.h"

namespace mg::safetensors_detail {

static_assert(std::endian::native == std::endian::little,
              "safetensors data are little-endian; this reader maps them as they are");

// The longest header the reference implementation accepts (its MAX_HEADER_SIZE).
inline constexpr std::uint64_t kMaxHeaderBytes = 100'000'000;

// One dtype of the format: its name as files spell it, its size in bits (F4 and F6 are narrower
// than a byte), and the minigraph dtype it maps to without conversion, if any.
struct FormatDType {
  std::string_view name;
  int bits;
  std::optional<DType> same;
};

// Every dtype of the reference implementation (safetensors/src/tensor.rs, enum Dtype);
// nullptr for a name it does not know.
const FormatDType* find_format_dtype(std::string_view name);
// The name a file spells minigraph's dtype with ("F32" for f32 ...).
std::string_view format_dtype_name(DType dtype);

// Half-precision to f32, exactly (every half value is an f32 value): bf16 is the upper 16 bits
// of an f32; f16 has 5 exponent bits (bias 15) and 10 mantissa bits, with subnormals, ±inf and
// NaN (its payload kept in the upper mantissa bits).
inline float bf16_to_f32(std::uint16_t bits) {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

inline float f16_to_f32(std::uint16_t bits) {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000u) << 16;
  const std::uint32_t exponent = (bits >> 10) & 0x1Fu;
  std::uint32_t mantissa = bits & 0x3FFu;
  if (exponent == 0x1F)  // inf (mantissa 0) or NaN
    return std::bit_cast<float>(sign | 0x7F800000u | (mantissa << 13));
  if (exponent != 0)  // normal: rebias 15 -> 127
    return std::bit_cast<float>(sign | ((exponent + 112) << 23) | (mantissa << 13));
  if (mantissa == 0) return std::bit_cast<float>(sign);  // ±0
  // Subnormal: mantissa * 2^-24. Shift it up to a normal f32 with an implicit leading one.
  int shift = 0;
  while ((mantissa & 0x400u) == 0) {
    mantissa <<= 1;
    ++shift;
  }
  // The value is 1.m * 2^(-14 - shift): f32 exponent field 127 - 14 - shift.
  const std::uint32_t f32_exponent = static_cast<std::uint32_t>(113 - shift);
  return std::bit_cast<float>(sign | (f32_exponent << 23) | ((mantissa & 0x3FFu) << 13));
}

// Reads a little-endian value of type T at `p` (any alignment).
template <typename T>
T load_unaligned(const std::byte* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));
  return value;
}

// What a validated header says: the entries (sorted by name), the metadata, and where the
// data section starts (8 + header length). Throws mg::Error naming `source` for every rule of
// the reference implementation's read_metadata and validate.
struct Header {
  std::vector<SafetensorsEntry> entries;
  std::map<std::string, std::string> metadata;
  std::int64_t data_offset = 0;
  std::int64_t data_bytes = 0;
};
Header validate_file(std::span<const std::byte> file, const std::string& source);

}  // namespace mg::safetensors_detail
