// libFuzzer target for the safetensors loader (framework/include/minigraph/safetensors.h).
//
// Each input is a whole file's bytes. SafetensorsFile::parse either refuses it with an
// mg::Error, which is an expected outcome, or accepts it, and then everything it promises must
// hold: the entries are sorted, unique and cover the data section exactly; every tensor of a
// dtype minigraph represents materialises with the entry's shape, inside its storage, with the
// values the file's bytes hold (read element by element, so a bad offset is a read ASan sees);
// every other dtype is refused with an mg::Error; and the tensors outlive the file object.
// Anything else is a finding: another exception (std::terminate), a sanitizer report, a leak,
// or a broken promise, which this target reports on stderr and turns into an abort so that
// libFuzzer keeps the input.
//
// Building and running it: docs/fuzzing.md.
#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "minigraph/cpu.h"
#include "minigraph/error.h"
#include "minigraph/safetensors.h"
#include "minigraph/tensor.h"

namespace {

constexpr std::string_view kSource = "fuzz-input.safetensors";

[[noreturn]] void finding(const std::string& what) {
  std::fprintf(stderr, "FINDING: %s\n", what.c_str());
  std::abort();
}

// MG_FUZZ_VERBOSE=1 prints what the loader said about each input (for running seeds by hand).
bool verbose() {
  static const bool on = std::getenv("MG_FUZZ_VERBOSE") != nullptr;
  return on;
}

void expect(bool ok, const std::string& what) {
  if (!ok) finding(what);
}

// Bytes per element of the dtypes the safetensors format defines (0 for a dtype this table
// does not know; the loader may know more, e.g. a newer format's, and then only refusing it
// in tensor() is checked).
std::int64_t format_dtype_size(std::string_view dtype) {
  struct Row {
    std::string_view name;
    std::int64_t size;
  };
  static constexpr Row kRows[] = {{"BOOL", 1},    {"U8", 1},  {"I8", 1},  {"F8_E4M3", 1},
                                  {"F8_E5M2", 1}, {"I16", 2}, {"U16", 2}, {"F16", 2},
                                  {"BF16", 2},    {"I32", 4}, {"U32", 4}, {"F32", 4},
                                  {"I64", 8},     {"U64", 8}, {"F64", 8}};
  for (const Row& row : kRows) {
    if (row.name == dtype) return row.size;
  }
  return 0;
}

// The dtype tensor(name) returns for a file dtype, or nothing where minigraph has none.
std::optional<mg::DType> loaded_dtype(std::string_view dtype) {
  if (dtype == "F32" || dtype == "BF16" || dtype == "F16") return mg::DType::f32;
  if (dtype == "F64") return mg::DType::f64;
  if (dtype == "I32") return mg::DType::i32;
  if (dtype == "I64") return mg::DType::i64;
  if (dtype == "BOOL") return mg::DType::boolean;
  return std::nullopt;
}

template <typename T>
T load_le(const std::uint8_t* p) {
  T value;
  std::memcpy(&value, p, sizeof(T));  // the host is little-endian (x86-64, aarch64)
  return value;
}

float half_to_float(std::uint16_t h) {
  const int sign = (h >> 15) & 1, exponent = (h >> 10) & 0x1f, mantissa = h & 0x3ff;
  float magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<float>(mantissa), -24);  // subnormal (or zero)
  } else if (exponent == 31) {
    magnitude = mantissa == 0 ? INFINITY : NAN;
  } else {
    magnitude = std::ldexp(static_cast<float>(mantissa | 0x400), exponent - 25);
  }
  return sign ? -magnitude : magnitude;
}

float bf16_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// The same value: equal bits, or both NaN (a conversion may quieten a NaN's payload).
bool same_float(double got, double want) {
  if (std::isnan(got) || std::isnan(want)) return std::isnan(got) && std::isnan(want);
  return std::memcmp(&got, &want, sizeof got) == 0;
}

// The value the file holds for element `i` of a tensor of `dtype` whose data starts at `raw`,
// as tensor(name) must return it.
double file_value(std::string_view dtype, const std::uint8_t* raw, std::int64_t i) {
  if (dtype == "F32") return load_le<float>(raw + 4 * i);
  if (dtype == "F64") return load_le<double>(raw + 8 * i);
  if (dtype == "I32") return load_le<std::int32_t>(raw + 4 * i);
  if (dtype == "I64") return static_cast<double>(load_le<std::int64_t>(raw + 8 * i));
  if (dtype == "BF16") return bf16_to_float(load_le<std::uint16_t>(raw + 2 * i));
  if (dtype == "BOOL") return raw[i];
  return half_to_float(load_le<std::uint16_t>(raw + 2 * i));  // F16
}

// Reads every element of `t` through its own pointer and compares it with the file's bytes.
void check_values(const mg::Tensor& t, const mg::SafetensorsEntry& e, const std::uint8_t* raw) {
  const std::string where = "tensor '" + e.name + "' (" + e.dtype + ")";
  const void* data = t.numel() == 0 ? nullptr : t.raw_data();
  for (std::int64_t i = 0; i < t.numel(); ++i) {
    const double want = file_value(e.dtype, raw, i);
    double got = 0;
    switch (t.dtype()) {
      case mg::DType::f32:
        got = static_cast<const float*>(data)[i];
        break;
      case mg::DType::f64:
        got = static_cast<const double*>(data)[i];
        break;
      case mg::DType::i32:
        got = static_cast<const std::int32_t*>(data)[i];
        break;
      case mg::DType::i64:
        // Compared exactly below: a double would round large ids together.
        expect(static_cast<const std::int64_t*>(data)[i] == load_le<std::int64_t>(raw + 8 * i),
               where + ": element " + std::to_string(i) + " differs from the file");
        continue;
      case mg::DType::boolean:  // the loader let only 0 and 1 through
        got = static_cast<const std::uint8_t*>(data)[i];
        break;
    }
    expect(same_float(got, want),
           where + ": element " + std::to_string(i) + " differs from the file");
  }
}

// The tensor tensor(name) returned for entry `e`: dtype, shape, device and extent.
void check_tensor(const mg::Tensor& t, const mg::SafetensorsEntry& e, mg::DType want) {
  const std::string where = "tensor '" + e.name + "' (" + e.dtype + ")";
  expect(t.defined(), where + ": undefined");
  expect(t.dtype() == want, where + ": wrong dtype");
  expect(t.shape() == e.shape, where + ": shape differs from the header's");
  expect(t.device() == mg::Device::cpu(), where + ": not on the CPU");
  expect(t.numel() == mg::shape_numel(e.shape), where + ": numel differs from the shape's");
  const mg::Storage& storage = *t.impl()->storage;
  const auto itemsize = static_cast<std::uint64_t>(mg::dtype_size(t.dtype()));
  const auto offset = static_cast<std::uint64_t>(t.storage_offset());
  expect(t.storage_offset() >= 0 && offset <= storage.bytes() / itemsize &&
             t.nbytes() <= storage.bytes() - offset * itemsize,
         where + ": extends past its storage");
}

// Every promise about an accepted file's header, checked against the input's bytes.
void check_entries(const mg::SafetensorsFile& file, std::span<const std::uint8_t> input) {
  const auto header_length = load_le<std::uint64_t>(input.data());
  expect(header_length <= input.size() - 8, "accepted a header longer than the input");
  const auto data_bytes = static_cast<std::int64_t>(input.size() - 8 - header_length);
  expect(file.data_bytes() == data_bytes, "data_bytes() is not the input's size after the header");
  expect(file.source() == kSource, "source() is not the name parse was given");

  const auto& entries = file.entries();
  std::vector<const mg::SafetensorsEntry*> by_offset;
  for (std::size_t i = 0; i < entries.size(); ++i) {
    const mg::SafetensorsEntry& e = entries[i];
    expect(i == 0 || entries[i - 1].name < e.name, "entries not sorted by name, or a duplicate");
    expect(file.find(e.name) == &e, "find() does not return the entry '" + e.name + "'");
    expect(0 <= e.begin && e.begin <= e.end && e.end <= data_bytes,
           "entry '" + e.name + "' outside the data section");
    for (std::int64_t d : e.shape) expect(d >= 0, "entry '" + e.name + "' has a negative size");
    if (const std::int64_t size = format_dtype_size(e.dtype); size != 0) {
      // shape_numel is checked (throws on overflow): an accepted shape must not overflow.
      expect(mg::shape_numel(e.shape) == (e.end - e.begin) / size && (e.end - e.begin) % size == 0,
             "entry '" + e.name + "': shape x dtype size is not its byte range");
    }
    by_offset.push_back(&e);
  }
  std::sort(by_offset.begin(), by_offset.end(), [](const auto* a, const auto* b) {
    return a->begin != b->begin ? a->begin < b->begin : a->end < b->end;
  });
  std::int64_t covered = 0;
  for (const auto* e : by_offset) {
    expect(e->begin == covered, "entry '" + e->name + "' leaves a gap or overlaps another");
    covered = e->end;
  }
  expect(covered == data_bytes, "the entries do not cover the data section");
  expect(file.find("\x01 not a name in any header") == nullptr, "find() of an absent name");
  for (const auto& [key, value] : file.metadata()) {
    expect(key.size() + value.size() < input.size(), "metadata larger than the input");
  }
}

// Conversions of entry `e` (loaded as `t`, of `dtype`): floats to floats, ints to ints
// (narrowing ints may refuse: mg::Error).
void check_conversions(const mg::SafetensorsFile& file, const mg::SafetensorsEntry& e,
                       const mg::Tensor& t, mg::DType dtype) {
  const bool floating = mg::is_floating(dtype);
  if (dtype == mg::DType::boolean) return;  // a mask loads as bool only (refused otherwise)
  for (mg::DType to : {mg::DType::f32, mg::DType::f64, mg::DType::i32, mg::DType::i64}) {
    try {
      mg::Tensor c = file.tensor(e.name, to);
      expect(mg::is_floating(to) == floating, "tensor '" + e.name + "' converted across kinds");
      check_tensor(c, e, to);
      if (to == mg::DType::f64) {
        const std::vector<double> got = c.to_vector<double>();
        for (std::int64_t i = 0; i < t.numel(); ++i) {
          expect(same_float(got[static_cast<std::size_t>(i)], t.at_flat(i)),
                 "tensor '" + e.name + "' converted to f64 changed element " + std::to_string(i));
        }
      }
    } catch (const mg::Error&) {
      // Refused: only across kinds, or i64 to i32 (which may not fit).
      expect(mg::is_floating(to) != floating || (to == mg::DType::i32 && dtype == mg::DType::i64),
             "tensor '" + e.name + "' (" + e.dtype + ") refused a conversion to " +
                 std::string(mg::dtype_name(to)));
    }
  }
}

// tensors(): every entry in name order, or a refusal exactly when a dtype is not minigraph's.
void check_all_tensors(const mg::SafetensorsFile& file, bool all_representable) {
  try {
    const mg::StateDict all = file.tensors();
    expect(all_representable, "tensors() returned a file holding a dtype minigraph lacks");
    expect(all.size() == file.entries().size(), "tensors() lost entries");
    for (std::size_t i = 0; i < all.size(); ++i) {
      expect(all[i].first == file.entries()[i].name, "tensors() out of name order");
    }
  } catch (const mg::Error& error) {
    expect(!all_representable, std::string("tensors() refused an accepted file: ") + error.what());
  }
}

// tensor(name) of every entry, compared with the bytes; conversions; refusals. Returns the
// tensors made with copies of their entries, which the caller reads again after the file
// object is gone.
std::vector<std::pair<mg::SafetensorsEntry, mg::Tensor>> check_tensors(
    const mg::SafetensorsFile& file, const std::uint8_t* data_section) {
  std::vector<std::pair<mg::SafetensorsEntry, mg::Tensor>> made;
  bool all_representable = true;
  for (const mg::SafetensorsEntry& e : file.entries()) {
    const std::optional<mg::DType> dtype = loaded_dtype(e.dtype);
    // A BOOL byte other than 0 or 1 is refused: it would be undefined behaviour as a bool.
    const std::uint8_t* bytes = data_section + e.begin;
    const bool bad_bool = e.dtype == "BOOL" && std::any_of(bytes, bytes + (e.end - e.begin),
                                                          [](std::uint8_t b) { return b > 1; });
    if (!dtype || bad_bool) {
      all_representable = false;
      try {
        (void)file.tensor(e.name);
        finding("tensor '" + e.name + "' of dtype " + e.dtype + " was not refused");
      } catch (const mg::Error&) {
      }
      continue;
    }
    mg::Tensor t;
    try {
      t = file.tensor(e.name);
    } catch (const mg::Error& error) {
      finding("an accepted file refused tensor '" + e.name + "' (" + e.dtype +
              "): " + error.what());
    }
    check_tensor(t, e, *dtype);
    check_values(t, e, data_section + e.begin);
    made.emplace_back(e, t);

    check_conversions(file, e, t, *dtype);
  }
  check_all_tensors(file, all_representable);
  try {
    (void)file.tensor("\x01 not a name in any header");
    finding("tensor() of an absent name returned");
  } catch (const mg::Error&) {
  }
  return made;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::span<const std::uint8_t> input(data, size);
  std::optional<mg::SafetensorsFile> file;
  try {
    file.emplace(mg::SafetensorsFile::parse(std::as_bytes(input), std::string(kSource)));
  } catch (const mg::Error& error) {
    // The expected outcome for most inputs; the message must still name the input.
    expect(std::string_view(error.what()).find(kSource) != std::string_view::npos,
           std::string("an error that does not name the file: ") + error.what());
    if (verbose()) std::fprintf(stderr, "refused: %s\n", error.what());
    return 0;
  }
  expect(size >= 8, "accepted an input shorter than the length field");
  check_entries(*file, input);
  const std::uint8_t* data_section = data + 8 + load_le<std::uint64_t>(data);
  auto made = check_tensors(*file, data_section);

  // The tensors hold what keeps their memory alive: read them again without the file object
  // (a use after free here is ASan's report).
  if (verbose()) {
    std::fprintf(stderr, "accepted: %zu tensors, %zu metadata keys, %zu materialised\n",
                 file->entries().size(), file->metadata().size(), made.size());
  }
  file.reset();
  for (const auto& [entry, tensor] : made) check_values(tensor, entry, data_section + entry.begin);
  made.clear();
  // Back to the system, what the CPU allocator cached of the converted tensors' memory: ASan
  // then sees each input's blocks freed (poisoned), and libFuzzer's per-input leak check, which
  // runs an input again whenever it ends with more mallocs than frees, stays quiet and on.
  mg::cpu::empty_cache();
  return 0;
}
