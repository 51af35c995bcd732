// safetensors files: round trips of every dtype (0-d and zero-size tensors, metadata), the
// layout the writer promises, zero-copy reads from the mapping, the fixture PyTorch wrote
// (tests/fixtures, made by tools/interop/make_fixture.py) value by value, the half-precision
// conversions over all 65536 bit patterns, every validation rule of the reference reader on a
// hand-made file, and the writer's refusals (which leave no file behind).
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <bit>
#include <cmath>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <optional>
#include <sstream>
#include <tuple>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "minigraph/safetensors.h"
#include "scratch_dir.h"

namespace mg {
namespace {

namespace fs = std::filesystem;
using testing::expect_error;
using testing::ScratchDir;
using Bytes = std::vector<std::byte>;
constexpr std::int64_t kI64Min = std::numeric_limits<std::int64_t>::min();
constexpr std::int64_t kI64Max = std::numeric_limits<std::int64_t>::max();
constexpr std::int32_t kI32Min = std::numeric_limits<std::int32_t>::min();
constexpr std::int32_t kI32Max = std::numeric_limits<std::int32_t>::max();

// A file's bytes: the 8-byte little-endian `length` (the header's size unless given), the header
// text and `data`.
Bytes make_file(std::string_view header, const Bytes& data = {},
                std::optional<std::uint64_t> length = std::nullopt) {
  Bytes out(8);
  std::uint64_t n = length.value_or(header.size());
  for (auto& b : out) {
    b = std::byte(n & 0xFF);
    n >>= 8;
  }
  for (char c : header) out.push_back(std::byte(c));
  out.insert(out.end(), data.begin(), data.end());
  return out;
}

Bytes zeros(std::size_t n) { return Bytes(n, std::byte{0}); }

template <typename T>
Bytes bytes_of(const std::vector<T>& values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

Bytes read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::string s((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  Bytes out(s.size());
  std::memcpy(out.data(), s.data(), s.size());
  return out;
}

// Whether `p` lies in a mapping of the file `path` (read from /proc/self/maps).
bool in_mapping_of(const void* p, const std::string& path) {
  std::ifstream maps("/proc/self/maps");
  const auto address = reinterpret_cast<std::uintptr_t>(p);
  const std::string canonical = fs::canonical(path).string();
  for (std::string line; std::getline(maps, line);) {
    std::istringstream fields(line);
    std::string range, perms, offset, dev, inode, file;
    fields >> range >> perms >> offset >> dev >> inode >> file;
    const auto dash = range.find('-');
    const auto lo = std::stoull(range.substr(0, dash), nullptr, 16);
    const auto hi = std::stoull(range.substr(dash + 1), nullptr, 16);
    if (address >= lo && address < hi) return file == canonical;
  }
  return false;
}

// Equal values, NaN equal to NaN and zeros compared by sign.
void expect_same(double expected, double got, const std::string& what) {
  if (std::isnan(expected)) {
    EXPECT_TRUE(std::isnan(got)) << what;
  } else {
    EXPECT_EQ(expected, got) << what;
    EXPECT_EQ(std::signbit(expected), std::signbit(got)) << what;
  }
}

// The PyTorch fixture's tensors, by the formulas of tools/interop/fixture_values.py.
struct FixtureTensor {
  std::string name, dtype;
  Shape shape;
  std::vector<double> floats;
  std::vector<std::int64_t> ints;
};

std::vector<FixtureTensor> fixture_tensors() {
  const double inf = std::numeric_limits<double>::infinity();
  std::vector<FixtureTensor> t = {
      {"input.tok_emb.weight", "F32", {4, 3}, {}, {}},
      {"layers.0.norm.bias", "F64", {5}, {}, {}},
      {"ids", "I64", {2, 3}, {}, {kI64Min, -1, 0, 1, (std::int64_t{1} << 53) + 1, kI64Max}},
      {"counts", "I32", {3}, {}, {kI32Min, 7919, kI32Max}},
      {"bf16.weight", "BF16", {2, 4}, {}, {}},
      {"f16.special",
       "F16",
       {9},
       {0.0, -0.0, std::ldexp(1, -24), std::ldexp(1, -14) - std::ldexp(1, -24), std::ldexp(1, -14),
        65504.0, inf, -inf, std::nan("")},
       {}},
      {"f16.ramp", "F16", {2, 3}, {}, {}},
      {"scalar", "F32", {}, {3.5}, {}},
      {"empty", "F32", {0, 3}, {}, {}},
  };
  for (int i = 0; i < 12; ++i) t[0].floats.push_back((i - 5) * 0.375);
  for (int i = 0; i < 5; ++i) t[1].floats.push_back(i * 0.1 - 1.0 / 3.0);
  for (int i = 0; i < 6; ++i) t[4].floats.push_back((i - 3) * 0.5);
  t[4].floats.push_back(std::ldexp(1, 100));
  t[4].floats.push_back(-std::ldexp(1, -100));
  for (int i = 0; i < 6; ++i) t[6].floats.push_back((i - 2) * 0.25);
  return t;
}

// Every value of `t` against the formula (floats as the dtype holds them; ints exactly).
void expect_fixture_values(const Tensor& got, const FixtureTensor& want) {
  ASSERT_EQ(got.shape(), want.shape) << want.name;
  if (is_integer(got.dtype())) {
    const auto values = got.dtype() == DType::i64 ? got.to_vector<std::int64_t>() : [&] {
      auto v = got.to_vector<std::int32_t>();
      return std::vector<std::int64_t>(v.begin(), v.end());
    }();
    EXPECT_EQ(values, want.ints) << want.name;
    return;
  }
  const auto values = got.to_f64_vector();
  ASSERT_EQ(values.size(), want.floats.size()) << want.name;
  for (std::size_t i = 0; i < values.size(); ++i) {
    const double expected =
        got.dtype() == DType::f32 ? static_cast<float>(want.floats[i]) : want.floats[i];
    expect_same(expected, values[i], want.name + "[" + std::to_string(i) + "]");
  }
}

TEST(Safetensors, RoundTripsEveryDtypeWithScalarsEmptyTensorsAndMetadata) {
  ScratchDir dir;
  const StateDict tensors = {
      {"w.f32", Tensor::normal({2, 3}, 0, 1, 7)},
      {"w.f64", Tensor::from_vector<double>({1e-300, -0.0, 1.0 / 3.0}, {3})},
      {"ids.i32", Tensor::from_vector<std::int32_t>({kI32Min, -1, kI32Max}, {3})},
      {"ids.i64", Tensor::from_vector<std::int64_t>({kI64Min, kI64Max, 0, 42}, {2, 2})},
      {"scalar", Tensor::full({}, 2.5)},
      {"empty.i64", Tensor::zeros({0}, DType::i64)},
      {"empty.f64", Tensor::zeros({3, 0}, DType::f64)},
  };
  const std::string path = dir.file("all.safetensors");
  save_safetensors(path, tensors, {{"config", R"({"d_model": 8})"}, {"note", "héllo"}});
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"all.safetensors"});  // no temporary left

  const SafetensorsFile file = SafetensorsFile::open(path);
  EXPECT_EQ(file.source(), path);
  const std::map<std::string, std::string> metadata = {{"format", "pt"},
                                                       {"framework", "minigraph"},
                                                       {"version", MINIGRAPH_VERSION_STRING},
                                                       {"config", R"({"d_model": 8})"},
                                                       {"note", "héllo"}};
  EXPECT_EQ(file.metadata(), metadata);
  std::vector<std::string> names;
  for (const auto& e : file.entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{"empty.f64", "empty.i64", "ids.i32", "ids.i64",
                                             "scalar", "w.f32", "w.f64"}));
  EXPECT_EQ(file.find("ids.i32")->dtype, "I32");
  EXPECT_EQ(file.find("scalar")->shape, Shape{});
  EXPECT_EQ(file.find("nothing"), nullptr);
  EXPECT_EQ(file.data_bytes(), 24 + 12 + 32 + 4 + 24);

  const StateDict loaded = file.tensors();
  ASSERT_EQ(loaded.size(), tensors.size());
  for (const auto& [name, original] : tensors) {
    const Tensor got = file.tensor(name);
    EXPECT_EQ(got.dtype(), original.dtype()) << name;
    EXPECT_EQ(got.shape(), original.shape()) << name;
    EXPECT_EQ(std::memcmp(got.raw_data(), original.raw_data(), original.nbytes()), 0) << name;
  }
  EXPECT_TRUE(std::signbit(file.tensor("w.f64").at({1})));
  EXPECT_EQ(load_safetensors(path).size(), tensors.size());
}

TEST(Safetensors, WriterPadsTheHeaderAndAlignsEveryTensorToItsElementSize) {
  ScratchDir dir;
  const std::string path = dir.file("layout.safetensors");
  // Odd element counts: by name alone, "a" (3 f32) would put "b" (f64) at byte 12.
  save_safetensors(path, {{"a", Tensor::ones({3})},
                          {"b", Tensor::ones({2}, DType::f64)},
                          {"c", Tensor::ones({1}, DType::i32)},
                          {"d", Tensor::ones({1}, DType::i64)}});
  const Bytes bytes = read_file(path);
  std::uint64_t n = 0;
  std::memcpy(&n, bytes.data(), 8);
  EXPECT_EQ(n % 8, 0u);
  EXPECT_EQ(static_cast<char>(bytes[8]), '{');
  const SafetensorsFile file = SafetensorsFile::open(path);
  // 8-byte elements first, then 4-byte ones, each group by name.
  EXPECT_EQ(file.find("b")->begin, 0);
  EXPECT_EQ(file.find("d")->begin, 16);
  EXPECT_EQ(file.find("a")->begin, 24);
  EXPECT_EQ(file.find("c")->begin, 36);
  for (const auto& e : file.entries()) {
    const Tensor t = file.tensor(e.name);
    EXPECT_EQ((8 + n + static_cast<std::uint64_t>(e.begin)) % dtype_size(t.dtype()), 0u) << e.name;
    EXPECT_TRUE(in_mapping_of(t.raw_data(), path)) << e.name << " was copied";
  }
}

TEST(Safetensors, OpenSharesTheMappingForAlignedDataAndWritesStayPrivate) {
  ScratchDir dir;
  const std::string path = dir.file("w.safetensors");
  save_safetensors(path, {{"w", Tensor::from_vector<float>({1, 2, 3, 4}, {2, 2})}});
  Tensor t;
  {
    const SafetensorsFile file = SafetensorsFile::open(path);
    t = file.tensor("w");
    EXPECT_TRUE(in_mapping_of(t.raw_data(), path));
    EXPECT_EQ(file.tensor("w").raw_data(), t.raw_data());  // the same bytes, not a copy
    EXPECT_FALSE(in_mapping_of(file.tensor("w").clone().raw_data(), path));
  }
  // The tensor keeps the mapping alive after the file object goes, and can be written into:
  // the write is the process's own (copy-on-write), never the file's.
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  const auto version = t.version();
  t.fill_(9);
  EXPECT_GT(t.version(), version);
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>(4, 9)));
  EXPECT_EQ(SafetensorsFile::open(path).tensor("w").to_vector<float>(),
            (std::vector<float>{1, 2, 3, 4}));
  // Saving over a mapped file replaces it (rename): the mapped tensor keeps its bytes.
  const Tensor old = SafetensorsFile::open(path).tensor("w");
  save_safetensors(path, {{"w", Tensor::full({2, 2}, 5)}});
  EXPECT_EQ(old.to_vector<float>(), (std::vector<float>{1, 2, 3, 4}));
  EXPECT_EQ(SafetensorsFile::open(path).tensor("w").to_vector<float>(), (std::vector<float>(4, 5)));
}

TEST(Safetensors, UnalignedDataAreCopiedAndOtherFormatDtypesAreValidButNotLoadable) {
  // "u" (2 bytes of U8) puts "f" (F32) at data offset 2: not 4-aligned, so it is copied.
  const std::string header = R"({"f":{"dtype":"F32","shape":[2],"data_offsets":[2,10]},)"
                             R"("u":{"dtype":"U8","shape":[2],"data_offsets":[0,2]}})";
  std::string padded = header + std::string((8 - header.size() % 8) % 8, ' ');
  Bytes data = {std::byte{7}, std::byte{8}};
  const Bytes f = bytes_of(std::vector<float>{1.5f, -2.25f});
  data.insert(data.end(), f.begin(), f.end());
  const SafetensorsFile file = SafetensorsFile::parse(make_file(padded, data), "mixed");
  const Tensor t = file.tensor("f");
  EXPECT_EQ(t.to_vector<float>(), (std::vector<float>{1.5f, -2.25f}));
  EXPECT_EQ(reinterpret_cast<std::uintptr_t>(t.raw_data()) % 4, 0u);
  EXPECT_NE(file.tensor("f").raw_data(), t.raw_data());  // a fresh copy each time
  EXPECT_EQ(file.tensor("f", DType::f64).to_vector<double>(), (std::vector<double>{1.5, -2.25}));

  const Error e = expect_error([&] { file.tensor("u"); });
  EXPECT_EQ(e.op(), "safetensors 'mixed'");
  EXPECT_EQ(e.argument(), "u");
  EXPECT_NE(e.actual().find("U8"), std::string::npos) << e.what();
  EXPECT_EQ(expect_error([&] { file.tensor("u", DType::f32); }).argument(), "u");
  const Error missing = expect_error([&] { file.tensor("nope"); });
  EXPECT_EQ(missing.argument(), "nope");
  EXPECT_NE(std::string(missing.what()).find("no such tensor"), std::string::npos);
  EXPECT_THROW(file.tensors(), Error);  // "u" among them
}

TEST(Safetensors, ConvertsToTheRequestedDtype) {
  const std::string header = R"({"d":{"dtype":"F64","shape":[2],"data_offsets":[0,16]},)"
                             R"("i":{"dtype":"I64","shape":[2],"data_offsets":[16,32]},)"
                             R"("j":{"dtype":"I32","shape":[2],"data_offsets":[32,40]}})";
  Bytes data = bytes_of(std::vector<double>{0.1, -1e300});
  for (const Bytes& more : {bytes_of(std::vector<std::int64_t>{kI32Max, kI32Min}),
                            bytes_of(std::vector<std::int32_t>{-5, 6})})
    data.insert(data.end(), more.begin(), more.end());
  const SafetensorsFile file = SafetensorsFile::parse(make_file(header, data));
  EXPECT_EQ(file.tensor("d", DType::f32).to_vector<float>(),
            (std::vector<float>{0.1f, -std::numeric_limits<float>::infinity()}));
  EXPECT_EQ(file.tensor("i", DType::i32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{kI32Max, kI32Min}));
  EXPECT_EQ(file.tensor("j", DType::i64).to_vector<std::int64_t>(),
            (std::vector<std::int64_t>{-5, 6}));
  EXPECT_EQ(expect_error([&] { file.tensor("d", DType::i64); }).argument(), "d");
  EXPECT_EQ(expect_error([&] { file.tensor("j", DType::f32); }).argument(), "j");

  const std::string big = R"({"i":{"dtype":"I64","shape":[2],"data_offsets":[0,16]}})";
  const SafetensorsFile too_big = SafetensorsFile::parse(
      make_file(big, bytes_of(std::vector<std::int64_t>{1, std::int64_t{kI32Max} + 1})));
  const Error e = expect_error([&] { too_big.tensor("i", DType::i32); });
  EXPECT_EQ(e.argument(), "i");
  EXPECT_NE(e.actual().find("2147483648 at element 1"), std::string::npos) << e.what();
}

// Half precision: every one of the 65536 bit patterns against the definition of the format,
// computed another way (ldexp of the fields).
double half_value(std::uint16_t bits, int exponent_bits, int bias) {
  const int mantissa_bits = 15 - exponent_bits;
  const int e = (bits >> mantissa_bits) & ((1 << exponent_bits) - 1);
  const int m = bits & ((1 << mantissa_bits) - 1);
  const double sign = bits & 0x8000 ? -1.0 : 1.0;
  if (e == (1 << exponent_bits) - 1)
    return m == 0 ? sign * std::numeric_limits<double>::infinity() : std::nan("");
  if (e == 0) return sign * std::ldexp(m, 1 - bias - mantissa_bits);
  return sign * std::ldexp(m + (1 << mantissa_bits), e - bias - mantissa_bits);
}

TEST(Safetensors, Bf16AndF16ConvertExactlyForEveryBitPattern) {
  std::vector<std::uint16_t> patterns(65536);
  for (std::size_t i = 0; i < patterns.size(); ++i) patterns[i] = static_cast<std::uint16_t>(i);
  for (const auto& [dtype, exponent_bits, bias] :
       {std::tuple{"BF16", 8, 127}, std::tuple{"F16", 5, 15}}) {
    const std::string header = fmt::format(
        R"({{"h":{{"dtype":"{}","shape":[256,256],"data_offsets":[0,131072]}}}})", dtype);
    const SafetensorsFile file = SafetensorsFile::parse(make_file(header, bytes_of(patterns)));
    const Tensor t = file.tensor("h");
    ASSERT_EQ(t.dtype(), DType::f32);
    const auto values = t.to_vector<float>();
    int mismatches = 0;
    for (std::size_t i = 0; i < patterns.size() && mismatches < 5; ++i) {
      const double want = half_value(patterns[i], exponent_bits, bias);
      const bool same = std::isnan(want)
                            ? std::isnan(values[i])
                            : want == values[i] && std::signbit(want) == std::signbit(values[i]);
      if (!same) {
        ++mismatches;
        ADD_FAILURE() << dtype << " 0x" << std::hex << i << ": expected " << want << ", got "
                      << values[i];
      }
    }
    // The f64 path gives the same values.
    EXPECT_EQ(file.tensor("h", DType::f64).at_flat(0x3C00),
              half_value(0x3C00, exponent_bits, bias));
  }
}

TEST(Safetensors, ReadsTheFixturePyTorchWroteValueByValue) {
  const std::string path =
      std::string(MINIGRAPH_SOURCE_DIR) + "/tests/fixtures/torch_small.safetensors";
  const SafetensorsFile file = SafetensorsFile::open(path);
  EXPECT_EQ(file.metadata(), (std::map<std::string, std::string>{
                                 {"format", "pt"}, {"source", "tools/interop/make_fixture.py"}}));
  const auto expected = fixture_tensors();
  ASSERT_EQ(file.entries().size(), expected.size());
  for (const auto& want : expected) {
    SCOPED_TRACE(want.name);
    const SafetensorsEntry* entry = file.find(want.name);
    ASSERT_NE(entry, nullptr);
    EXPECT_EQ(entry->dtype, want.dtype);
    const Tensor t = file.tensor(want.name);
    EXPECT_EQ(t.dtype(), want.dtype == "F64"   ? DType::f64
                         : want.dtype == "I64" ? DType::i64
                         : want.dtype == "I32" ? DType::i32
                                               : DType::f32);
    expect_fixture_values(t, want);
    if (!want.floats.empty()) expect_fixture_values(file.tensor(want.name, DType::f64), want);
  }
  // PyTorch's writer aligns as ours does: its f32 weight is shared, not copied.
  EXPECT_TRUE(in_mapping_of(file.tensor("input.tok_emb.weight").raw_data(), path));
  EXPECT_EQ(expect_error([&] { file.tensor("ids", DType::i32); }).argument(), "ids");
}

// The file tools/interop/check_torch_reads.py checks with PyTorch: written here, read back
// against the same formulas, and also written to $MINIGRAPH_INTEROP_OUT when that is set.
TEST(Safetensors, WritesTheFileCheckTorchReadsExpects) {
  StateDict tensors;
  for (const auto& t : fixture_tensors()) {
    if (t.dtype == "I64") tensors.emplace_back(t.name, Tensor::from_vector(t.ints, t.shape));
    if (t.dtype == "I32")
      tensors.emplace_back(
          t.name,
          Tensor::from_vector(std::vector<std::int32_t>(t.ints.begin(), t.ints.end()), t.shape));
    if (t.dtype == "F64") tensors.emplace_back(t.name, Tensor::from_vector(t.floats, t.shape));
    if (t.dtype == "F32")
      tensors.emplace_back(
          t.name,
          Tensor::from_vector(std::vector<float>(t.floats.begin(), t.floats.end()), t.shape));
  }
  ScratchDir dir;
  std::vector<std::string> paths = {dir.file("interop.safetensors")};
  if (const char* out = std::getenv("MINIGRAPH_INTEROP_OUT")) paths.emplace_back(out);
  for (const auto& path : paths) {
    save_safetensors(path, tensors, {{"note", "written by tests/test_safetensors.cpp"}});
    const SafetensorsFile file = SafetensorsFile::open(path);
    EXPECT_EQ(file.entries().size(), 6u);
    for (const auto& want : fixture_tensors()) {
      if (want.dtype == "BF16" || want.dtype == "F16") continue;
      SCOPED_TRACE(want.name);
      expect_fixture_values(file.tensor(want.name), want);
    }
  }
}

// --- validation: one hand-made file per rule, through SafetensorsFile::parse ------------------

// A header entry: "name":{"dtype":...,"shape":[...],"data_offsets":[begin,end]}.
std::string entry(const std::string& name, const std::string& dtype, const std::string& shape,
                  const std::string& offsets) {
  return fmt::format(R"("{}":{{"dtype":"{}","shape":{},"data_offsets":{}}})", name, dtype, shape,
                     offsets);
}
std::string object(const std::string& body) { return "{" + body + "}"; }

struct BadFile {
  std::string rule;  // the test's name
  Bytes bytes;
  std::string argument;  // what the error names besides the file: a tensor or a part
  std::string says;      // text the message must contain
};

// long function: one row per rule a file can break, a table read top to bottom.
std::vector<BadFile> bad_files() {
  const std::string a8 = entry("a", "F32", "[2]", "[0,8]");
  const auto one = [](const std::string& body, std::size_t data = 8) {
    return make_file(object(body), zeros(data));
  };
  return {
      {"EmptyFile", {}, "header length", "at least 8 bytes"},
      {"ShorterThanTheLengthField", zeros(7), "header length", "got 7 bytes"},
      {"HeaderLengthAtUint64Max", make_file("{}", {}, std::numeric_limits<std::uint64_t>::max()),
       "header length", "at most 100000000 bytes (100 MB), got 18446744073709551615"},
      {"HeaderLengthPast100MB", make_file("{}", {}, 100'000'001), "header length",
       "at most 100000000 bytes"},
      {"HeaderLengthPastTheEndOfTheFile", make_file("{}  ", {}, 100), "header length",
       "at most the 4 bytes after the length field, got 100 bytes"},
      {"HeaderNotUtf8", make_file("{\"\xff\":1}"), "header",
       "valid UTF-8, got an invalid byte 0xff at header offset 2"},
      {"HeaderOverlongUtf8", make_file("{\"\xc0\xaf\":1}"), "header", "valid UTF-8"},
      {"HeaderUtf8Surrogate", make_file("{\"\xed\xa0\x80\":1}"), "header", "valid UTF-8"},
      {"HeaderPaddedWithNul", make_file(std::string("{}\0\0\0\0\0\0", 8)), "header",
       "control character 0x00 at header offset 2"},
      {"HeaderNotJson", make_file("{"), "header", "valid JSON"},
      {"HeaderWithGarbageAfterTheObject", make_file("{} x"), "header", "valid JSON"},
      {"HeaderNotAnObject", make_file("[]"), "header", "starting with '{'"},
      {"HeaderWithLeadingSpace", make_file(" {}"), "header", "starting with '{'"},
      {"EntryNotAnObject", make_file(R"({"a":1})"), "a", "an object"},
      {"EntryWithoutDataOffsets", make_file(R"({"a":{"dtype":"F32","shape":[]}})"), "a",
       "no 'data_offsets'"},
      {"EntryWithAnotherKey",
       make_file(R"({"a":{"dtype":"F32","shape":[],"data_offsets":[0,4],"x":1}})", zeros(4)), "a",
       "an unexpected key 'x'"},
      {"DtypeNotAString", make_file(R"({"a":{"dtype":32,"shape":[],"data_offsets":[0,4]}})"), "a",
       "dtype a string"},
      {"UnknownDtype", one(entry("a", "F31", "[2]", "[0,8]")), "a", "got dtype 'F31'"},
      {"ShapeNotAnArray", one(entry("a", "F32", "2", "[0,8]")), "a", "shape an array"},
      {"NegativeSize", one(entry("a", "F32", "[-2]", "[0,8]")), "a", "got shape [-2]"},
      {"FractionalSize", one(entry("a", "F32", "[2.0]", "[0,8]")), "a",
       "integers in [0, 2^63 - 1]"},
      {"SizePastInt64", one(entry("a", "I32", "[2,18446744073709551614]", "[0,16]")), "a",
       "integers in [0, 2^63 - 1]"},
      {"OffsetsNotTwo", one(entry("a", "F32", "[2]", "[8]")), "a", "data_offsets two integers"},
      {"NegativeOffset", one(entry("a", "F32", "[2]", "[-8,0]")), "a", "data_offsets two integers"},
      {"OffsetsReversed", one(entry("a", "F32", "[0]", "[8,0]")), "a", "begin <= end, got [8, 0]"},
      {"ElementCountOverflows", one(entry("a", "F32", "[4611686018427387904,4]", "[0,8]")), "a",
       "element count fits in 64 bits"},
      {"ElementCountOverflowsAsInTheReference",
       one(entry("a", "I32", "[2,9223372036854775807]", "[0,16]"), 16), "a",
       "element count fits in 64 bits"},
      {"BytesOverflow", one(entry("a", "F64", "[2305843009213693952,2]", "[0,8]")), "a",
       "a size in bytes that fits in 64 bits"},
      {"SizeDisagreesWithTheOffsets", one(entry("a", "I32", "[2,2]", "[0,4]"), 4), "a",
       "data_offsets spanning 16 bytes (I32 [2, 2]), got [0, 4]: 4 bytes"},
      {"SubByteDtypeNotAWholeNumberOfBytes", one(entry("a", "F4", "[3]", "[0,2]"), 2), "a",
       "a whole number of bytes"},
      {"DuplicateNames", one(a8 + "," + a8), "a", "each tensor name once in the header, got 'a'"},
      {"DuplicateKeyInAnEntry",
       one(R"("a":{"dtype":"F32","dtype":"F32","shape":[2],"data_offsets":[0,8]})"), "a",
       "'dtype' a second time"},
      {"OverlappingOffsets", one(a8 + "," + entry("b", "F32", "[2]", "[4,12]"), 12), "b",
       "data starting at byte 8, where 'a' ends, got [4, 12]: overlapping 'a' [0, 8]"},
      {"GapBetweenTensors", one(a8 + "," + entry("b", "F32", "[2]", "[12,20]"), 20), "b",
       "a gap of 4 bytes before it"},
      {"DataNotStartingAtZero", one(entry("a", "F32", "[2]", "[8,16]"), 16), "a",
       "data starting at byte 0, the data section's start"},
      {"TrailingBytesAfterTheData", one(a8, 12), "data section",
       "8 bytes, where the last tensor's data end, got 12 bytes (bytes after the last tensor)"},
      {"FileEndsBeforeTheData", one(a8, 4), "data section", "(the file ends early)"},
      {"MetadataNotAnObject", one(R"("__metadata__":"x")", 0), "__metadata__",
       "an object of string values, got a JSON string"},
      {"MetadataValueNotAString", one(R"("__metadata__":{"k":1})", 0), "__metadata__",
       "got 'k': a JSON number"},
      {"NestingDeeperThanAnEntry", one(entry("a", "F32", "[[2]]", "[0,8]")), "a",
       "an array at nesting depth 3"},
  };
}

class SafetensorsRejects : public ::testing::TestWithParam<BadFile> {};

TEST_P(SafetensorsRejects, NamingTheFileAndWhatIsWrong) {
  const BadFile& bad = GetParam();
  const Error e = expect_error([&] { SafetensorsFile::parse(bad.bytes, "bad.safetensors"); });
  EXPECT_EQ(e.op(), "safetensors 'bad.safetensors'");
  EXPECT_EQ(e.argument(), bad.argument);
  EXPECT_NE(std::string(e.what()).find(bad.says), std::string::npos)
      << "the error says: " << e.what() << "\nexpected it to contain: " << bad.says;
}

INSTANTIATE_TEST_SUITE_P(Rules, SafetensorsRejects, ::testing::ValuesIn(bad_files()),
                         [](const auto& info) { return info.param.rule; });

TEST(Safetensors, AcceptsWhatTheReferenceAccepts) {
  // Trailing JSON whitespace, no tensors.
  EXPECT_TRUE(SafetensorsFile::parse(make_file("{}\t\r\n  ")).entries().empty());
  // 0-d and zero-size tensors (several at one offset), sub-byte dtypes in whole bytes, an empty
  // name, a non-ASCII name and metadata.
  const std::string body =
      entry("", "I32", "[]", "[0,4]") + "," + entry("z1", "F32", "[2,0]", "[4,4]") + "," +
      entry("z2", "F64", "[0]", "[4,4]") + "," + entry("f4", "F4", "[4]", "[4,6]") + "," +
      entry("é", "BOOL", "[2]", "[6,8]") + R"(,"__metadata__":{"k":"v"})";
  const SafetensorsFile file = SafetensorsFile::parse(make_file(object(body), zeros(8)));
  EXPECT_EQ(file.entries().size(), 5u);
  EXPECT_EQ(file.source(), "<memory>");
  EXPECT_EQ(file.metadata().at("k"), "v");
  EXPECT_EQ(file.tensor("").shape(), Shape{});
  EXPECT_EQ(file.tensor("z1").shape(), (Shape{2, 0}));
  EXPECT_EQ(file.tensor("z2", DType::f32).numel(), 0);
  EXPECT_EQ(file.find("é")->dtype, "BOOL");
}

TEST(Safetensors, OpenNamesThePathOfAFileItCannotRead) {
  ScratchDir dir;
  const std::string missing = dir.file("missing.safetensors");
  Error e = expect_error([&] { SafetensorsFile::open(missing); });
  EXPECT_EQ(e.op(), "safetensors '" + missing + "'");
  EXPECT_NE(e.actual().find("No such file"), std::string::npos) << e.what();
  e = expect_error([&] { SafetensorsFile::open(dir.path.string()); });
  EXPECT_EQ(e.expected(), "a regular file");
  EXPECT_EQ(e.actual(), fmt::format("'{}': a directory", dir.path.string()));
  const std::string empty = dir.file("empty.safetensors");
  std::ofstream(empty).close();
  e = expect_error([&] { SafetensorsFile::open(empty); });
  EXPECT_EQ(e.op(), "safetensors '" + empty + "'");
  EXPECT_EQ(e.argument(), "header length");
}

// --- the writer's refusals: nothing is left behind ---------------------------------------------

TEST(Safetensors, WriterRefusesBadNamesBeforeCreatingAFile) {
  ScratchDir dir;
  const std::string path = dir.file("out.safetensors");
  const Tensor t = Tensor::ones({2});
  const std::vector<std::pair<StateDict, std::string>> cases = {
      {{{"a", t}, {"b", t}, {"a", t}}, "'a' twice"},
      {{{"a", t}, {"", t}}, "an empty name at entry 1"},
      {{{"__metadata__", t}}, "reserves for the metadata"},
      {{{"a", Tensor()}}, "an undefined tensor"},
  };
  for (const auto& [tensors, says] : cases) {
    const Error e = expect_error([&] { save_safetensors(path, tensors); });
    EXPECT_EQ(e.op(), "save_safetensors");
    EXPECT_NE(std::string(e.what()).find(says), std::string::npos) << e.what();
    EXPECT_TRUE(dir.listing().empty()) << says;
  }
  // A header past what readers accept (100 MB) is refused too.
  const Error e = expect_error([&] {
    save_safetensors(path, {{"a", t}}, {{"big", std::string(100'000'000, 'x')}});
  });
  EXPECT_EQ(e.argument(), "metadata");
  EXPECT_TRUE(dir.listing().empty());
}

TEST(Safetensors, WriterNamesAPathItCannotWriteAndLeavesNoFile) {
  ScratchDir dir;
  const std::string in_missing_dir = dir.file("missing/out.safetensors");
  Error e = expect_error([&] { save_safetensors(in_missing_dir, {{"a", Tensor::ones({2})}}); });
  EXPECT_EQ(e.argument(), "path");
  EXPECT_NE(e.actual().find(in_missing_dir), std::string::npos) << e.what();
  // The rename fails (a folder has the name): the temporary file is removed.
  fs::create_directories(dir.path / "taken.safetensors" / "inside");
  e = expect_error([&] {
    save_safetensors(dir.file("taken.safetensors"), {{"a", Tensor::ones({2})}});
  });
  EXPECT_NE(e.actual().find("while renaming into place '" + dir.file("taken.safetensors") + "'"),
            std::string::npos)
      << e.what();
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"taken.safetensors"});
}

TEST(Safetensors, AFailedWriteLeavesNoFileAndTheOldOneUntouched) {
  ScratchDir dir;
  const std::string path = dir.file("out.safetensors");
  save_safetensors(path, {{"a", Tensor::ones({2})}});
  const Bytes before = read_file(path);
  // Files may grow to 64 KiB only: writing 1 MiB of data fails half way (EFBIG).
  rlimit old{};
  ASSERT_EQ(getrlimit(RLIMIT_FSIZE, &old), 0);
  rlimit small = old;
  small.rlim_cur = 64 * 1024;
  auto previous_handler = std::signal(SIGXFSZ, SIG_IGN);
  ASSERT_EQ(setrlimit(RLIMIT_FSIZE, &small), 0);
  const Error e = expect_error([&] { save_safetensors(path, {{"a", Tensor::ones({512, 512})}}); });
  setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous_handler);
  EXPECT_EQ(e.expected(), "a file that can be written");
  EXPECT_EQ(e.actual(), "File too large while writing '" + path + "'");
  EXPECT_EQ(dir.listing(), std::vector<std::string>{"out.safetensors"});
  EXPECT_EQ(read_file(path), before);
}

TEST(Safetensors, WritesTensorsFromAnyDevice) {
  if (!device_available(Device::cuda())) GTEST_SKIP() << "no CUDA device";
  ScratchDir dir;
  const std::string path = dir.file("gpu.safetensors");
  const Tensor host = Tensor::from_vector<float>({1, -2, 3}, {3});
  save_safetensors(path, {{"g", host.to(Device::cuda())}});
  EXPECT_EQ(SafetensorsFile::open(path).tensor("g").to_vector<float>(), host.to_vector<float>());
}

}  // namespace
}  // namespace mg
