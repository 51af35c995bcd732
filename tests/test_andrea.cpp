// The ANDREA input layer and untied head: shapes, parameter names and counts, the summary,
// x_t = tok_emb[id_t] + pos_emb[t], and gradient checks of the composition.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "expect_error.h"
#include "minigraph/gtest.h"
#include "minigraph/minigraph.h"

namespace mg::andrea {
namespace {

AndreaConfig tiny(DType dtype = DType::f32) {
  AndreaConfig c;
  c.vocab_size = 11;
  c.d_model = 4;
  c.context = 6;
  c.dtype = dtype;
  return c;
}

TEST(Andrea, PresetParameterCountsMatchTheSeed) {
  AndreaConfig c = AndreaConfig::lesson();
  EXPECT_EQ(c.token_embedding_parameters(), 6'488'832);
  EXPECT_EQ(c.position_embedding_parameters(), 786'432);
  EXPECT_EQ(c.embedding_parameters(), 7'275'264);
  EXPECT_EQ(c.head_parameters(), 6'488'832);
}

TEST(Andrea, SummaryPrintsTheSeedTable) {
  EXPECT_EQ(summary(AndreaConfig::lesson()),
            "token embedding table             8,449 × 768 =   6,488,832\n"
            "position embedding table          1,024 × 768 =     786,432\n"
            "total embedding parameters                        7,275,264\n"
            "untied output head                768 × 8,449 =   6,488,832\n"
            "total parameters                                 13,764,096\n"
            "token table 47.14 %, embeddings 52.86 % of the parameters\n");
  // The preset: 15 GPT-2 blocks at D = 768, 7,087,872 parameters each.
  EXPECT_EQ(summary(AndreaConfig::andrea_120m()),
            "token embedding table             8,449 × 768 =   6,488,832\n"
            "position embedding table          1,024 × 768 =     786,432\n"
            "total embedding parameters                        7,275,264\n"
            "blocks (H 12, F 3072)          15 × 7,087,872 = 106,318,080\n"
            "final LayerNorm                       2 × 768 =       1,536\n"
            "untied output head                768 × 8,449 =   6,488,832\n"
            "total parameters                                120,083,712\n"
            "token table 5.40 %, embeddings 6.06 % of the parameters\n");
  EXPECT_EQ(group_thousands(1234567), "1,234,567");
  EXPECT_EQ(group_thousands(999), "999");
  EXPECT_EQ(group_thousands(-1234), "-1,234");
  EXPECT_EQ(group_thousands(std::numeric_limits<std::int64_t>::min()),
            "-9,223,372,036,854,775,808");
}

TEST(Andrea, NamedParametersAndCount) {
  Andrea model(tiny());
  std::vector<std::string> names;
  for (auto& [name, p] : model.named_parameters()) {
    names.push_back(name);
    EXPECT_TRUE(p.requires_grad()) << name;
  }
  EXPECT_EQ(names, (std::vector<std::string>{"input.tok_emb.weight", "input.pos_emb.weight",
                                             "head.weight"}));
  EXPECT_EQ(model.num_parameters(), 11 * 4 + 6 * 4 + 4 * 11);
  EXPECT_EQ(model.input.num_parameters(), 11 * 4 + 6 * 4);
}

TEST(Andrea, InitialisationIsSeededNormalScaledByOneOverSqrtD) {
  AndreaConfig c = AndreaConfig::lesson();
  Andrea a(c), b(c);
  auto rms = [](const std::vector<float>& values) {
    double squares = 0;
    for (float v : values) squares += double(v) * v;
    return std::sqrt(squares / values.size());
  };
  // Every table: the same values from the same seed, RMS 1/sqrt(d_model) (not 1/sqrt(V) or
  // 1/sqrt(T_max)), and tables of their own (separate seeds).
  const std::vector<float> first[3] = {a.input.tok_emb().weight().to_vector<float>(),
                                       a.input.pos_emb().weight().to_vector<float>(),
                                       a.head.weight().to_vector<float>()};
  const std::vector<float> again[3] = {b.input.tok_emb().weight().to_vector<float>(),
                                       b.input.pos_emb().weight().to_vector<float>(),
                                       b.head.weight().to_vector<float>()};
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(first[i], again[i]) << "table " << i;
    EXPECT_NEAR(rms(first[i]), 1.0 / std::sqrt(768.0), 1e-3) << "table " << i;
  }
  EXPECT_NE(first[0][0], first[1][0]);
  EXPECT_NE(first[0][0], first[2][0]);
}

TEST(Andrea, InputLayerIsTokenRowPlusPositionRow) {
  AndreaConfig c = tiny();
  InputLayer layer(c);
  std::vector<std::int64_t> id_values{3, 3, 10, 0, 7, 3, 1, 2};
  Tensor ids = Tensor::from_vector(id_values, {2, 4});
  for (std::int64_t offset : {0, 2}) {
    Tensor x = layer.forward(ids, offset);
    ASSERT_EQ(x.shape(), (Shape{2, 4, 4}));
    auto tok = layer.tok_emb().weight().to_vector<float>();
    auto pos = layer.pos_emb().weight().to_vector<float>();
    auto out = x.to_vector<float>();
    for (std::int64_t b = 0; b < 2; ++b)
      for (std::int64_t t = 0; t < 4; ++t)
        for (std::int64_t d = 0; d < 4; ++d)
          EXPECT_EQ(out[(b * 4 + t) * 4 + d],
                    tok[id_values[b * 4 + t] * 4 + d] + pos[(offset + t) * 4 + d]);
  }
}

// The fused fast path against the three graph nodes it replaces: same values, same gradients.
// Both paths (the fused op, and embedding + position_embedding + add) against loops written
// here: the two share embedding_backward, so comparing them with each other alone would let a
// bug there pass.
TEST(Andrea, FusedAndComposedInputLayersMatchLoopsWrittenHere) {
  InputLayer layer(tiny());
  const std::vector<std::int64_t> id = {3, 3, 10, 0, 7, 3, 1, 2, 3, 3, 3, 9};
  Tensor ids = Tensor::from_vector<std::int64_t>(id, {3, 4});
  Tensor g = Tensor::normal({3, 4, 4}, 0, 1, 11);
  const std::int64_t offset = 1, length = 4, width = 4;
  const auto tok = layer.tok_emb().weight().to_vector<float>();
  const auto pos = layer.pos_emb().weight().to_vector<float>();
  const auto up = g.to_vector<float>();
  std::vector<float> x(up.size()), tok_grad(tok.size(), 0.0f), pos_grad(pos.size(), 0.0f);
  for (std::size_t p = 0; p < id.size(); ++p) {
    const std::int64_t t = static_cast<std::int64_t>(p) % length + offset;
    for (std::int64_t d = 0; d < width; ++d) {
      x[p * width + d] = tok[id[p] * width + d] + pos[t * width + d];
      tok_grad[id[p] * width + d] += up[p * width + d];
      pos_grad[t * width + d] += up[p * width + d];
    }
  }
  for (int composed = 0; composed < 2; ++composed) {
    layer.zero_grad();
    Tensor out = composed ? layer.forward_composed(ids, offset) : layer.forward(ids, offset);
    out.backward(g);
    const char* path = composed ? "composed" : "fused";
    EXPECT_EQ(out.to_vector<float>(), x) << path << " forward";
    const auto got_tok = layer.tok_emb().weight().grad().to_vector<float>();
    const auto got_pos = layer.pos_emb().weight().grad().to_vector<float>();
    for (std::size_t i = 0; i < tok_grad.size(); ++i)
      EXPECT_NEAR(got_tok[i], tok_grad[i], 1e-6) << path << " tok #" << i;
    for (std::size_t i = 0; i < pos_grad.size(); ++i)
      EXPECT_NEAR(got_pos[i], pos_grad[i], 1e-6) << path << " pos #" << i;
  }
}

TEST(Andrea, HeadGivesLogitsOverTheVocabulary) {
  Andrea model(tiny());
  Tensor logits = model.forward(Tensor::from_vector<std::int64_t>({1, 2, 3, 4, 5, 6}, {2, 3}));
  EXPECT_EQ(logits.shape(), (Shape{2, 3, 11}));
  EXPECT_FALSE(model.head.weight().is_same(model.input.tok_emb().weight()));
}

TEST(Andrea, EmbeddingGradientSumsRepeatedIdsAndLeavesOtherRowsZero) {
  InputLayer layer(tiny(DType::f64));
  Tensor ids = Tensor::from_vector<std::int64_t>({4, 4, 9, 4}, {1, 4});
  Tensor x = layer.forward(ids);
  Tensor g = Tensor::normal(x.shape(), 0, 1, 3, DType::f64);
  x.backward(g);
  auto grad = layer.tok_emb().weight().grad().to_vector<double>();
  auto up = g.to_vector<double>();
  for (std::int64_t row = 0; row < 11; ++row) {
    for (std::int64_t d = 0; d < 4; ++d) {
      double expected = 0;
      for (std::int64_t t = 0; t < 4; ++t)
        if (ids.at({0, t}) == row) expected += up[t * 4 + d];
      if (row == 4 || row == 9) {
        EXPECT_NEAR(grad[row * 4 + d], expected, 1e-15);
      } else {
        EXPECT_EQ(grad[row * 4 + d], 0.0) << "untouched row " << row;  // exactly zero
      }
    }
  }
  // Positions 0..3 get their column of the upstream gradient; 4 and 5 (past T = 4) exactly 0.
  auto pos_grad = layer.pos_emb().weight().grad().to_vector<double>();
  for (std::int64_t t = 0; t < 6; ++t) {
    for (std::int64_t d = 0; d < 4; ++d) {
      EXPECT_EQ(pos_grad[t * 4 + d], t < 4 ? up[t * 4 + d] : 0.0) << "position " << t;
    }
  }
}

// The input layer + head in f64, with repeated ids and broadcasting over the batch, as the
// model runs it (the fused op) and composed from embedding + position_embedding + add.
TEST(Andrea, InputLayerAndHeadPassGradcheckFusedAndComposed) {
  Andrea model(tiny(DType::f64));
  Tensor ids = Tensor::from_vector<std::int64_t>({3, 3, 10, 0, 3, 1, 1, 7, 3, 2}, {2, 5});
  std::vector<Tensor> params;
  std::vector<std::string> names;
  for (auto& [name, p] : model.named_parameters()) {
    params.push_back(p);
    names.push_back(name);
  }
  GradcheckOptions options;
  options.atol = 1e-7;
  for (int composed = 0; composed < 2; ++composed) {
    auto report = gradcheck(
        [&](const std::vector<Tensor>&) {
          return composed ? model.head.forward(model.input.forward_composed(ids, /*offset=*/1))
                          : model.forward(ids, /*offset=*/1);
        },
        params, names, options);
    EXPECT_TRUE(gradcheck_passed(report)) << (composed ? "composed" : "fused");
    ASSERT_EQ(report.inputs.size(), 3u);
    for (auto& r : report.inputs) {
      EXPECT_EQ(r.checked, r.name == "input.pos_emb.weight" ? 24 : 44) << r.name;
      EXPECT_LT(r.max_abs_error, 1e-7) << r.name;
    }
  }
}

TEST(Andrea, BadConfigIsAClearError) {
  AndreaConfig c = tiny();
  c.d_model = 0;
  Error e = testing::expect_error([&] { InputLayer{c}; });
  EXPECT_STREQ(e.what(), "AndreaConfig: argument 'd_model': expected a positive size, got 0");
  c = tiny();
  c.vocab_size = -5;
  e = testing::expect_error([&] { Andrea{c}; });
  EXPECT_STREQ(e.what(), "AndreaConfig: argument 'vocab_size': expected a positive size, got -5");
  c = tiny();
  c.context = 0;
  e = testing::expect_error([&] { summary(c); });
  EXPECT_STREQ(e.what(), "AndreaConfig: argument 'context': expected a positive size, got 0");
  c = tiny();
  c.dtype = DType::i64;
  e = testing::expect_error([&] { summary(c); });
  EXPECT_STREQ(e.what(), "AndreaConfig: argument 'dtype': expected f32 or f64, got i64");
  // Counts that would wrap in int64 (`minigraph summary --vocab 99999999999 --d-model ...`).
  c = tiny();
  c.vocab_size = c.d_model = 99'999'999'999;
  try {
    summary(c);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(),
                 "AndreaConfig: argument 'vocab_size × d_model': expected a product of at most "
                 "2^63 - 1, got 99999999999 × 99999999999 (passes INT64_MAX)");
  }
}

}  // namespace
}  // namespace mg::andrea
