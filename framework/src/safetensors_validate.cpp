// Validation of a safetensors file's header, rule by rule as the reference implementation
// (huggingface/safetensors, safetensors/src/tensor.rs: read_metadata and Metadata::validate)
// applies them, plus what its parser checks implicitly: duplicate keys (nlohmann::json keeps the
// last one silently, so a parser callback tracks the keys of every object) and the format's
// rule that the header starts with '{'. Every failure is an mg::Error whose op names the file,
// whose argument names the tensor (or the part of the file), and which says what is wrong.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>

#include "minigraph/error.h"
#include "safetensors_format.h"

namespace mg::safetensors_detail {

namespace {

using nlohmann::json;

constexpr std::array<FormatDType, 22> kFormatDTypes = {{
    {"BOOL", 8, DType::boolean},      {"F4", 4, std::nullopt},
    {"F6_E2M3", 6, std::nullopt},     {"F6_E3M2", 6, std::nullopt},
    {"U8", 8, std::nullopt},          {"I8", 8, std::nullopt},
    {"F8_E5M2", 8, std::nullopt},     {"F8_E4M3", 8, std::nullopt},
    {"F8_E8M0", 8, std::nullopt},     {"F8_E4M3FNUZ", 8, std::nullopt},
    {"F8_E5M2FNUZ", 8, std::nullopt}, {"I16", 16, std::nullopt},
    {"U16", 16, std::nullopt},        {"F16", 16, std::nullopt},
    {"BF16", 16, std::nullopt},       {"I32", 32, DType::i32},
    {"U32", 32, std::nullopt},        {"F32", 32, DType::f32},
    {"C64", 64, std::nullopt},        {"F64", 64, DType::f64},
    {"I64", 64, DType::i64},          {"U64", 64, std::nullopt},
}};

std::string file_op(const std::string& source) { return fmt::format("safetensors '{}'", source); }

// The first byte that breaks UTF-8 (as Rust's str::from_utf8 decides: no overlong forms, no
// surrogates, nothing past U+10FFFF), or -1. Raw control characters other than JSON's
// whitespace are invalid JSON anywhere; nlohmann's parser would take a NUL byte for the end of
// the input and accept "{}\0garbage", so they are refused here too (`control` set).
std::int64_t first_bad_byte(std::span<const std::byte> text, bool& control) {
  const auto at = [&](std::size_t i) { return std::to_integer<unsigned>(text[i]); };
  const auto continuation = [&](std::size_t i, unsigned lo, unsigned hi) {
    return i < text.size() && at(i) >= lo && at(i) <= hi;
  };
  for (std::size_t i = 0; i < text.size();) {
    const unsigned c = at(i);
    std::size_t length = 0;
    if (c < 0x80) {
      if (c < 0x20 && c != '\t' && c != '\n' && c != '\r') {
        control = true;
        return static_cast<std::int64_t>(i);
      }
      length = 1;
    } else if (c >= 0xC2 && c <= 0xDF) {
      length = continuation(i + 1, 0x80, 0xBF) ? 2 : 0;
    } else if (c >= 0xE0 && c <= 0xEF) {
      const unsigned lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
      length = continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) ? 3 : 0;
    } else if (c >= 0xF0 && c <= 0xF4) {
      const unsigned lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
      length = continuation(i + 1, lo, hi) && continuation(i + 2, 0x80, 0xBF) &&
                       continuation(i + 3, 0x80, 0xBF)
                   ? 4
                   : 0;
    }
    if (length == 0) return static_cast<std::int64_t>(i);
    i += length;
  }
  return -1;
}

// A JSON value as an offset or size: a non-negative integer that fits in int64 (a file's
// offsets and a shape's sizes cannot pass it; nlohmann stores larger ones as floats).
bool as_size(const json& value, std::int64_t& out) {
  if (!value.is_number_unsigned()) return false;
  const auto v = value.get<std::uint64_t>();
  if (v > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max())) return false;
  out = static_cast<std::int64_t>(v);
  return true;
}

// The bytes of `numel` elements of `bits` bits; false when they are not a whole number of bytes
// (F4, F6) or pass INT64_MAX. Computed without forming numel * bits, which can wrap.
bool bytes_of(std::int64_t numel, int bits, std::int64_t& bytes, bool& partial) {
  partial = ((numel % 8) * bits) % 8 != 0;
  if (partial) return false;
  std::int64_t whole = 0;
  if (__builtin_mul_overflow(numel / 8, static_cast<std::int64_t>(bits), &whole)) return false;
  return !__builtin_add_overflow(whole, (numel % 8) * bits / 8, &bytes);
}

// Parses the header text, refusing duplicate keys in any object and nesting deeper than a
// tensor entry's arrays (which also bounds the parser's work on hostile input).
json parse_header(std::string_view text, const std::string& op) {
  std::vector<std::set<std::string>> keys;  // of each object being parsed, innermost last
  std::string tensor;                       // the top-level key being parsed
  auto callback = [&](int depth, json::parse_event_t event, json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
      case json::parse_event_t::array_start:
        MG_CHECK(depth < 3, op, tensor,
                 "no value nested deeper than a tensor entry's shape and data_offsets arrays",
                 "an {} at nesting depth {}",
                 event == json::parse_event_t::array_start ? "array" : "object", depth);
        if (event == json::parse_event_t::object_start) keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        keys.pop_back();
        break;
      case json::parse_event_t::key: {
        const auto& key = parsed.get_ref<const std::string&>();
        if (depth == 1) {
          MG_CHECK(keys.back().insert(key).second, op, key, "each tensor name once in the header",
                   "'{}' a second time", key);
          tensor = key;
        } else {
          MG_CHECK(keys.back().insert(key).second, op, tensor, "each key of its entry once",
                   "'{}' a second time", key);
        }
        break;
      }
      default:
        break;
    }
    return true;
  };
  try {
    return json::parse(text.begin(), text.end(), callback);
  } catch (const json::exception& e) {
    throw Error(op, "header", "valid JSON", e.what());
  }
}

SafetensorsEntry read_entry(const std::string& name, const json& value, const std::string& op) {
  constexpr const char* kEntry = R"(an object {"dtype", "shape", "data_offsets"})";
  MG_CHECK(value.is_object(), op, name, kEntry, "a JSON {}", value.type_name());
  for (const auto& [key, field] : value.items()) {
    MG_CHECK(key == "dtype" || key == "shape" || key == "data_offsets", op, name, kEntry,
             "an unexpected key '{}'", key);
  }
  for (const char* key : {"dtype", "shape", "data_offsets"}) {
    MG_CHECK(value.contains(key), op, name, kEntry, "no '{}'", key);
  }
  SafetensorsEntry entry;
  entry.name = name;

  const json& dtype = value["dtype"];
  MG_CHECK(dtype.is_string(), op, name, "dtype a string", "a JSON {}", dtype.type_name());
  entry.dtype = dtype.get<std::string>();
  const FormatDType* format = find_format_dtype(entry.dtype);
  MG_CHECK(format != nullptr, op, name,
           "a dtype of the format (BOOL, U8, I8, I16, U16, I32, U32, I64, U64, F16, BF16, F32, "
           "F64, C64, F4, F6_*, F8_*)",
           "dtype '{}'", entry.dtype);

  const json& shape = value["shape"];
  MG_CHECK(shape.is_array(), op, name, "shape an array of sizes", "a JSON {}", shape.type_name());
  for (const auto& size : shape) {
    std::int64_t s = 0;
    MG_CHECK(as_size(size, s), op, name, "shape sizes that are integers in [0, 2^63 - 1]",
             "shape {}", shape.dump());
    entry.shape.push_back(s);
  }

  const json& offsets = value["data_offsets"];
  MG_CHECK(offsets.is_array() && offsets.size() == 2 && as_size(offsets[0], entry.begin) &&
               as_size(offsets[1], entry.end),
           op, name, "data_offsets two integers [begin, end] in [0, 2^63 - 1]", "data_offsets {}",
           offsets.dump());
  MG_CHECK(entry.begin <= entry.end, op, name, "data_offsets [begin, end] with begin <= end",
           "[{}, {}]", entry.begin, entry.end);

  std::int64_t numel = 1;
  for (auto s : entry.shape) {
    MG_CHECK(!__builtin_mul_overflow(numel, s, &numel), op, name,
             "a shape whose element count fits in 64 bits", "{} {}: the product passes 2^63 - 1",
             entry.dtype, shape_str(entry.shape));
  }
  std::int64_t bytes = 0;
  bool partial = false;
  const bool fits = bytes_of(numel, format->bits, bytes, partial);
  MG_CHECK(fits || partial, op, name, "a size in bytes that fits in 64 bits",
           "{} {}: {} elements of {} bits pass 2^63 - 1 bytes", entry.dtype, shape_str(entry.shape),
           numel, format->bits);
  MG_CHECK(fits, op, name, "a whole number of bytes", "{} {}: {} elements of {} bits", entry.dtype,
           shape_str(entry.shape), numel, format->bits);
  MG_CHECK(entry.end - entry.begin == bytes, op, name,
           fmt::format("data_offsets spanning {} bytes ({} {})", bytes, entry.dtype,
                       shape_str(entry.shape)),
           "[{}, {}]: {} bytes", entry.begin, entry.end, entry.end - entry.begin);
  return entry;
}

// The header length (the file's first 8 bytes, little-endian), checked against the file.
std::uint64_t header_length(std::span<const std::byte> file, const std::string& op) {
  const auto size = static_cast<std::uint64_t>(file.size());
  MG_CHECK(size >= 8, op, "header length", "a file of at least 8 bytes (the header length)",
           "{} bytes", size);
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(file[i]);
  MG_CHECK(n <= kMaxHeaderBytes, op, "header length",
           fmt::format("at most {} bytes (100 MB)", kMaxHeaderBytes), "{} bytes", n);
  MG_CHECK(n <= size - 8, op, "header length",
           fmt::format("at most the {} bytes after the length field", size - 8), "{} bytes", n);
  return n;
}

// What the JSON parser does not check: UTF-8, raw control characters, and the leading '{'.
void check_header_text(std::span<const std::byte> text, const std::string& op) {
  bool control = false;
  const std::int64_t bad = first_bad_byte(text, control);
  MG_CHECK(bad < 0 || control, op, "header", "valid UTF-8",
           "an invalid byte 0x{:02x} at header offset {}", std::to_integer<unsigned>(text[bad]),
           bad);
  MG_CHECK(bad < 0, op, "header", "valid JSON",
           "the control character 0x{:02x} at header offset {}",
           std::to_integer<unsigned>(text[bad]), bad);
  MG_CHECK(!text.empty() && text[0] == std::byte{'{'}, op, "header",
           "a JSON object starting with '{' (the format requires it)", "{}",
           text.empty() ? std::string("an empty header")
                        : fmt::format("first byte '{}'", static_cast<char>(text[0])));
}

void read_metadata(const json& value, std::map<std::string, std::string>& metadata,
                   const std::string& op) {
  MG_CHECK(value.is_object(), op, "__metadata__", "an object of string values", "a JSON {}",
           value.type_name());
  for (const auto& [k, v] : value.items()) {
    MG_CHECK(v.is_string(), op, "__metadata__", "an object of string values", "'{}': a JSON {}", k,
             v.type_name());
    metadata.emplace(k, v.get<std::string>());
  }
}

// The header's tensor entries and its metadata, in the order the JSON object lists them.
void read_header_items(const json& root, Header& header, const std::string& op) {
  for (const auto& [key, value] : root.items()) {
    if (key != "__metadata__") {
      header.entries.push_back(read_entry(key, value, op));
      continue;
    }
    read_metadata(value, header.metadata, op);
  }
}

// Sorted by offsets, the tensors must tile the data section: each starts where the one
// before ends (no gap, no overlap), from 0 to the end of the file. Returns where the last ends.
std::int64_t tiled_data_end(const std::vector<SafetensorsEntry>& entries, const std::string& op) {
  std::vector<const SafetensorsEntry*> by_offset;
  for (const auto& e : entries) by_offset.push_back(&e);
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return std::tie(a->begin, a->end, a->name) < std::tie(b->begin, b->end, b->name);
  });
  std::int64_t expected = 0;
  const SafetensorsEntry* previous = nullptr;
  for (const auto* e : by_offset) {
    const std::string where =
        previous ? fmt::format("where '{}' ends", previous->name) : "the data section's start";
    MG_CHECK(e->begin >= expected, op, e->name,
             fmt::format("data starting at byte {}, {}", expected, where),
             "[{}, {}]: overlapping '{}' [{}, {}]", e->begin, e->end,
             previous ? previous->name : "", previous ? previous->begin : 0,
             previous ? previous->end : 0);
    MG_CHECK(e->begin == expected, op, e->name,
             fmt::format("data starting at byte {}, {}", expected, where),
             "[{}, {}]: a gap of {} bytes before it", e->begin, e->end, e->begin - expected);
    expected = e->end;
    previous = e;
  }
  return expected;
}

// The tensors' data must end where the file does.
void check_data_section(std::int64_t expected, std::uint64_t after_header, const std::string& op) {
  MG_CHECK(static_cast<std::uint64_t>(expected) == after_header, op, "data section",
           fmt::format("{} bytes, where the last tensor's data end", expected), "{} bytes ({})",
           after_header,
           static_cast<std::uint64_t>(expected) < after_header ? "bytes after the last tensor"
                                                               : "the file ends early");
}

}  // namespace

const FormatDType* find_format_dtype(std::string_view name) {
  for (const auto& d : kFormatDTypes) {
    if (d.name == name) return &d;
  }
  return nullptr;
}

std::string_view format_dtype_name(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return "F32";
    case DType::f64:
      return "F64";
    case DType::i32:
      return "I32";
    case DType::i64:
      return "I64";
    case DType::boolean:
      return "BOOL";
  }
  throw Error("save_safetensors", "dtype", "f32, f64, i32, i64 or bool",
              fmt::format("{}", static_cast<int>(dtype)));
}

Header validate_file(std::span<const std::byte> file, const std::string& source) {
  const std::string op = file_op(source);
  const std::uint64_t n = header_length(file, op);
  const auto text = file.subspan(8, n);
  check_header_text(text, op);
  const json root =
      parse_header(std::string_view(reinterpret_cast<const char*>(text.data()), n), op);
  MG_CHECK(root.is_object(), op, "header", "a JSON object", "a JSON {}", root.type_name());

  Header header;
  header.data_offset = static_cast<std::int64_t>(8 + n);
  read_header_items(root, header, op);
  const std::int64_t expected = tiled_data_end(header.entries, op);
  check_data_section(expected, static_cast<std::uint64_t>(file.size()) - 8 - n, op);
  header.data_bytes = expected;
  return header;
}

}  // namespace mg::safetensors_detail
