// State dicts: names -> the parameters themselves; load_state_dict writing into the existing
// parameters (the handles held before see the values, same memory), every problem in one
// error with nothing changed, non-strict reports, float conversion, duplicates; save/load
// through a safetensors file; ANDREA's GPT-2 names (lm_head transposed, element by element).
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "minigraph/safetensors.h"

namespace mg {
namespace {

using testing::expect_error;

// Two parameters of different shapes.
class Pair : public Module {
 public:
  explicit Pair(DType dtype = DType::f32)
      : a(Tensor::from_vector<double>({1, 2, 3, 4, 5, 6}, {2, 3}).to(dtype)),
        b(Tensor::from_vector<double>({7, 8}, {2}).to(dtype)) {
    register_parameter("a", a);
    register_parameter("b", b);
  }
  Tensor a, b;
};

// A parameter of its own and a child: names "w", "inner.a", "inner.b".
class Outer : public Module {
 public:
  explicit Outer(DType dtype = DType::f32)
      : inner(dtype), w(Tensor::from_vector<double>({-1, -2}, {1, 2}).to(dtype)) {
    register_parameter("w", w);
    register_module("inner", inner);
  }
  Pair inner;
  Tensor w;
};

Tensor f32(std::vector<float> values, const Shape& shape) {
  return Tensor::from_vector(values, shape);
}

std::vector<std::string> names_of(const StateDict& dict) {
  std::vector<std::string> names;
  for (auto& [name, t] : dict) names.push_back(name);
  return names;
}

// Every parameter's values and storage version, to show that a refused load changed nothing.
struct Snapshot {
  explicit Snapshot(const Module& m) {
    for (auto& [name, p] : m.named_parameters()) {
      values.push_back(p.to_f64_vector());
      versions.push_back(p.version());
    }
  }
  bool operator==(const Snapshot&) const = default;
  std::vector<std::vector<double>> values;
  std::vector<std::uint64_t> versions;
};

TEST(StateDict, NamesTheParametersThemselves) {
  Outer m;
  const StateDict dict = m.state_dict();
  EXPECT_EQ(names_of(dict), (std::vector<std::string>{"w", "inner.a", "inner.b"}));
  EXPECT_TRUE(dict[0].second.is_same(m.w));
  EXPECT_TRUE(dict[1].second.is_same(m.inner.a));
  EXPECT_TRUE(dict[2].second.is_same(m.inner.b));
  // A write through the dict's handle is a write into the parameter.
  {
    NoGradGuard g;
    Tensor handle = dict[1].second;
    handle.fill_(9);
  }
  EXPECT_EQ(m.inner.a.to_vector<float>(), std::vector<float>(6, 9.0f));
}

TEST(StateDict, LoadWritesIntoTheHandlesHeldBefore) {
  Outer m;
  const Tensor held = m.inner.a;  // as an optimizer holds it
  const void* memory = held.raw_data();
  const std::uint64_t version = held.version();
  const LoadReport report = m.load_state_dict({{"w", f32({10, 20}, {1, 2})},
                                               {"inner.a", f32({0, 1, 2, 3, 4, 5}, {2, 3})},
                                               {"inner.b", f32({-7, -8}, {2})}});
  EXPECT_TRUE(report.missing.empty());
  EXPECT_TRUE(report.unexpected.empty());
  EXPECT_EQ(held.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(held.raw_data(), memory);
  EXPECT_TRUE(held.is_same(m.inner.a));
  EXPECT_GT(held.version(), version);
  EXPECT_TRUE(held.requires_grad());
  EXPECT_TRUE(held.is_leaf());
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{10, 20}));
  EXPECT_EQ(m.inner.b.to_vector<float>(), (std::vector<float>{-7, -8}));
}

TEST(StateDict, StrictListsEveryProblemInOneErrorAndChangesNothing) {
  Outer m;
  const Snapshot before(m);
  const Error e = expect_error([&] {
    m.load_state_dict({{"w", f32({10, 20}, {1, 2})},                  // fits
                       {"inner.a", f32({0, 1, 2, 3, 4, 5}, {3, 2})},  // transposed shape
                       {"extra", f32({1}, {1})},                      // no such parameter
                       {"more", f32({1}, {1})}});                     // nor this
  });                                                                 // inner.b missing
  EXPECT_EQ(e.op(), "Module::load_state_dict");
  EXPECT_EQ(e.actual(),
            "missing: inner.b; unexpected: extra, more; shape: inner.a expected [2, 3] got [3, 2]");
  EXPECT_TRUE(Snapshot(m) == before);  // "w" fitted, and was not written either
}

TEST(StateDict, StrictRefusesNonFloatDtypesAndUndefinedTensors) {
  Outer m;
  const Snapshot before(m);
  const Error e = expect_error([&] {
    m.load_state_dict({{"w", Tensor::from_vector<std::int64_t>({1, 2}, {1, 2})},
                       {"inner.a", Tensor()},
                       {"inner.b", f32({5, 6}, {2})}});
  });
  EXPECT_EQ(e.actual(), "dtype: w expected f32 got i64; undefined: inner.a");
  EXPECT_TRUE(Snapshot(m) == before);
}

TEST(StateDict, StrictRefusesAMissingEntryAlone) {
  Outer m;
  const Snapshot before(m);
  StateDict dict = m.state_dict();
  dict.pop_back();
  const Error e = expect_error([&] { m.load_state_dict(dict); });
  EXPECT_EQ(e.actual(), "missing: inner.b");
  EXPECT_TRUE(Snapshot(m) == before);
}

TEST(StateDict, NonStrictLoadsWhatFitsAndReportsTheRest) {
  Outer m;
  const LoadReport report = m.load_state_dict(
      {{"extra", f32({1}, {1})}, {"inner.a", f32({0, 1, 2, 3, 4, 5}, {2, 3})}}, false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"w", "inner.b"}));
  EXPECT_EQ(report.unexpected, (std::vector<std::string>{"extra"}));
  EXPECT_EQ(m.inner.a.to_vector<float>(), (std::vector<float>{0, 1, 2, 3, 4, 5}));
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{-1, -2}));  // left as it was
  EXPECT_EQ(m.inner.b.to_vector<float>(), (std::vector<float>{7, 8}));
}

TEST(StateDict, NonStrictStillRefusesAWrongShapeAndChangesNothing) {
  Outer m;
  const Snapshot before(m);
  const Error e = expect_error([&] {
    m.load_state_dict({{"w", f32({10, 20}, {1, 2})}, {"inner.b", f32({1, 2, 3}, {3})}}, false);
  });
  // Missing and unexpected names are not problems here, so the error lists only the shape.
  EXPECT_EQ(e.actual(), "shape: inner.b expected [2] got [3]");
  EXPECT_TRUE(Snapshot(m) == before);
}

TEST(StateDict, FloatsAreConvertedToTheParametersDtype) {
  Outer m;  // f32
  m.load_state_dict({{"w", Tensor::from_vector<double>({0.1, 1e-50}, {1, 2})},
                     {"inner.a", Tensor::from_vector<double>({1, 2, 3, 4, 5, 6.5}, {2, 3})},
                     {"inner.b", Tensor::from_vector<double>({-0.25, 3}, {2})}});
  EXPECT_EQ(m.w.dtype(), DType::f32);
  EXPECT_EQ(m.w.to_vector<float>(), (std::vector<float>{static_cast<float>(0.1), 0.0f}));
  EXPECT_EQ(m.inner.a.to_vector<float>(), (std::vector<float>{1, 2, 3, 4, 5, 6.5f}));
  // And the other way: f32 values into an f64 model, exactly.
  Outer m64(DType::f64);
  m64.load_state_dict(m.state_dict());
  EXPECT_EQ(m64.w.dtype(), DType::f64);
  EXPECT_EQ(m64.w.to_vector<double>(), (std::vector<double>{static_cast<float>(0.1), 0.0}));
  EXPECT_EQ(m64.inner.b.to_vector<double>(), (std::vector<double>{-0.25, 3}));
}

TEST(StateDict, DuplicateNamesAreAnErrorEvenWhenNotStrict) {
  Outer m;
  const Snapshot before(m);
  for (bool strict : {true, false}) {
    StateDict dict = m.state_dict();
    dict.emplace_back("inner.a", f32({0, 0, 0, 0, 0, 0}, {2, 3}));
    dict.emplace_back("x", f32({1}, {1}));
    dict.emplace_back("x", f32({2}, {1}));
    const Error e = expect_error([&] { m.load_state_dict(dict, strict); });
    EXPECT_EQ(e.actual(),
              strict ? "unexpected: x; duplicate: inner.a, x" : "duplicate: inner.a, x");
    EXPECT_TRUE(Snapshot(m) == before);
  }
}

TEST(StateDict, SwappingTwoParametersReadsBeforeItWrites) {
  class Twins : public Module {
   public:
    Twins() : p(f32({1, 2}, {2})), q(f32({3, 4}, {2})) {
      register_parameter("p", p);
      register_parameter("q", q);
    }
    Tensor p, q;
  } m;
  m.load_state_dict({{"p", m.q}, {"q", m.p}});
  EXPECT_EQ(m.p.to_vector<float>(), (std::vector<float>{3, 4}));
  EXPECT_EQ(m.q.to_vector<float>(), (std::vector<float>{1, 2}));
  // Its own state dict loads as a no-op.
  m.load_state_dict(m.state_dict());
  EXPECT_EQ(m.p.to_vector<float>(), (std::vector<float>{3, 4}));
}

// A file under the test's temporary directory, removed at the end of the test.
struct TempFile {
  explicit TempFile(const std::string& name)
      : path((std::filesystem::path(::testing::TempDir()) /
              (std::to_string(::getpid()) + "-" + name))
                 .string()) {}
  ~TempFile() { std::remove(path.c_str()); }
  std::string path;
};

TEST(StateDict, SaveAndLoadRoundTripThroughAFile) {
  TempFile file("state_dict_round_trip.safetensors");
  Outer saved;
  {
    NoGradGuard g;
    saved.inner.a.copy_(f32({0.5f, -1.5f, 1e-30f, 3.4e38f, -0.0f, 6}, {2, 3}));
  }
  saved.save(file.path, {{"note", "a test"}});
  const SafetensorsFile opened = SafetensorsFile::open(file.path);
  EXPECT_EQ(opened.metadata().at("note"), "a test");
  EXPECT_EQ(opened.metadata().at("framework"), "minigraph");

  Outer loaded;
  const Tensor held = loaded.inner.a;
  loaded.load(file.path);
  EXPECT_EQ(held.to_vector<float>(), saved.inner.a.to_vector<float>());
  EXPECT_EQ(loaded.w.to_vector<float>(), saved.w.to_vector<float>());
  EXPECT_EQ(loaded.inner.b.to_vector<float>(), saved.inner.b.to_vector<float>());

  // A file of another model: one error listing every problem, nothing changed.
  Pair other;
  const Snapshot before(other);
  const Error e = expect_error([&] { other.load(file.path); });
  EXPECT_EQ(e.actual(), "missing: a, b; unexpected: inner.a, inner.b, w");
  EXPECT_TRUE(Snapshot(other) == before);
  const LoadReport report = other.load(file.path, false);
  EXPECT_EQ(report.missing, (std::vector<std::string>{"a", "b"}));
}

// ---- ANDREA under GPT-2 names -----------------------------------------------------------

andrea::AndreaConfig tiny(std::uint64_t seed) {
  andrea::AndreaConfig c;
  c.vocab_size = 5;
  c.d_model = 3;
  c.context = 4;
  c.seed = seed;
  return c;
}

TEST(StateDict, AndreaToGpt2NamesTransposesTheHead) {
  andrea::Andrea model(tiny(1));
  const StateDict gpt2 = andrea::to_gpt2_names(model.state_dict());
  ASSERT_EQ(names_of(gpt2), (std::vector<std::string>{"transformer.wte.weight",
                                                      "transformer.wpe.weight", "lm_head.weight"}));
  EXPECT_TRUE(gpt2[0].second.is_same(model.input.tok_emb().weight()));
  EXPECT_TRUE(gpt2[1].second.is_same(model.input.pos_emb().weight()));
  const Tensor& head = model.head.weight();  // [D, V]
  const Tensor& lm_head = gpt2[2].second;    // [V, D]
  ASSERT_EQ(lm_head.shape(), (Shape{5, 3}));
  for (std::int64_t v = 0; v < 5; ++v) {
    for (std::int64_t d = 0; d < 3; ++d) {
      EXPECT_EQ(lm_head.at({v, d}), head.at({d, v})) << v << ", " << d;
    }
  }
  EXPECT_FALSE(lm_head.requires_grad());  // a copy, not the parameter
}

TEST(StateDict, AndreaGpt2NamesRoundTripIntoAnotherModel) {
  andrea::Andrea source(tiny(1)), target(tiny(50));
  ASSERT_NE(source.head.weight().to_vector<float>(), target.head.weight().to_vector<float>());
  target.load_state_dict(andrea::from_gpt2_names(andrea::to_gpt2_names(source.state_dict())));
  for (auto& [name, p] : source.named_parameters()) {
    Tensor loaded;
    for (auto& [n, t] : target.named_parameters()) {
      if (n == name) loaded = t;
    }
    EXPECT_EQ(loaded.to_vector<float>(), p.to_vector<float>()) << name;
  }
}

TEST(StateDict, FromGpt2NamesAcceptsTheHubsBareNamesAndPassesOthers) {
  const Tensor wte = f32({1, 2, 3, 4, 5, 6}, {3, 2});
  const StateDict mapped = andrea::from_gpt2_names(
      {{"wte.weight", wte}, {"h.0.attn.c_attn.weight", f32({1}, {1})}, {"lm_head.weight", wte}});
  EXPECT_EQ(names_of(mapped), (std::vector<std::string>{"input.tok_emb.weight",
                                                        "h.0.attn.c_attn.weight", "head.weight"}));
  EXPECT_TRUE(mapped[0].second.is_same(wte));
  EXPECT_EQ(mapped[2].second.shape(), (Shape{2, 3}));
  EXPECT_EQ(mapped[2].second.to_vector<float>(), (std::vector<float>{1, 3, 5, 2, 4, 6}));
  testing::expect_error_containing(
      [&] {
        andrea::from_gpt2_names({{"lm_head.weight", f32({1, 2}, {2})}});
      },
      "[2]");
}

TEST(StateDict, TransposedCopyOfEveryDtypeAndEmptyMatrices) {
  const Tensor ids = Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6, 7, 8}, {2, 4});
  const Tensor t = andrea::transposed_copy(ids, "ids");
  EXPECT_EQ(t.shape(), (Shape{4, 2}));
  EXPECT_EQ(t.to_vector<std::int64_t>(), (std::vector<std::int64_t>{1, 5, 2, 6, 3, 7, 4, 8}));
  // Larger than a tile in both directions, with ragged edges.
  const std::int64_t rows = 37, cols = 70;
  std::vector<double> values(rows * cols);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<double>(i);
  const Tensor big = andrea::transposed_copy(Tensor::from_vector(values, {rows, cols}), "big");
  for (std::int64_t r = 0; r < rows; ++r) {
    for (std::int64_t c = 0; c < cols; ++c) ASSERT_EQ(big.at({c, r}), r * cols + c);
  }
  EXPECT_EQ(andrea::transposed_copy(Tensor::zeros({0, 3}), "empty").shape(), (Shape{3, 0}));
}

}  // namespace
}  // namespace mg
