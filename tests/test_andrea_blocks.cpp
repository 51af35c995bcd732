// ANDREA with transformer blocks: the preset's count, the layout of names and seeds, zero blocks
// as the lesson model, the tied head, dropout in training mode only and keyed by its counter,
// moves, and the configuration's errors. (Values against torch.nn: test_andrea_reference.cpp.)
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "minigraph/ops/matmul/matmul.h"

namespace mg::andrea {
namespace {

AndreaConfig small_gpt(std::int64_t blocks, DType dtype = DType::f64) {
  AndreaConfig c;
  c.vocab_size = 17;
  c.d_model = 8;
  c.context = 8;
  c.heads = 2;
  c.blocks = blocks;
  c.dtype = dtype;
  return c;
}

Tensor some_ids() { return Tensor::from_vector<std::int64_t>({3, 1, 16, 0, 5, 5, 2, 9}, {2, 4}); }
Tensor some_targets() {
  return Tensor::from_vector<std::int64_t>({1, 16, 0, 5, 5, 2, 9, 4}, {2, 4});
}

std::vector<double> values_of(const Tensor& t) {
  return t.to(DType::f64).contiguous().to_vector<double>();
}

TEST(AndreaBlocks, PresetHas120083712ParametersAsItsConfigCounts) {
  const AndreaConfig c = AndreaConfig::andrea_120m();
  EXPECT_EQ(c.block_parameters(), 7'087'872);
  EXPECT_EQ(c.parameters(), 120'083'712);
  const Andrea model(c);
  EXPECT_EQ(model.num_parameters(), 120'083'712);
  EXPECT_EQ(model.blocks.size(), 15u);
  EXPECT_EQ(model.named_parameters().size(), 2 + 15 * 12 + 2 + 1u);
}

TEST(AndreaBlocks, NamesFollowTheLayoutAndEachBlockHasItsOwnSeeds) {
  const AndreaConfig c = small_gpt(2);
  const Andrea model(c);
  std::vector<std::string> names;
  for (const auto& [name, p] : model.named_parameters()) names.push_back(name);
  ASSERT_EQ(names.size(), 2 + 2 * 12 + 2 + 1u);
  EXPECT_EQ(names[2], "blocks.0.ln_1.weight");
  EXPECT_EQ(names[4], "blocks.0.attn.c_attn.weight");
  EXPECT_EQ(names[14], "blocks.1.ln_1.weight");
  EXPECT_EQ(names[26], "ln_f.weight");
  EXPECT_EQ(names[27], "ln_f.bias");
  EXPECT_EQ(names[28], "head.weight");
  EXPECT_EQ(model.num_parameters(), c.parameters());
  // Block i is the Block its options describe; the two blocks differ.
  for (std::int64_t i = 0; i < 2; ++i) {
    const Block alone(block_options(c, i));
    EXPECT_EQ(values_of(model.blocks[i].attn.c_attn.weight()),
              values_of(alone.attn.c_attn.weight()));
    EXPECT_EQ(values_of(model.blocks[i].mlp.c_proj.weight()), values_of(alone.mlp.c_proj.weight()));
  }
  EXPECT_NE(values_of(model.blocks[0].attn.c_attn.weight()),
            values_of(model.blocks[1].attn.c_attn.weight()));
  // The residual projections start at 0.02 / sqrt(2 N).
  const std::vector<double> proj = values_of(model.blocks[1].mlp.c_proj.weight());
  double squares = 0;
  for (double v : proj) squares += v * v;
  EXPECT_NEAR(std::sqrt(squares / proj.size()), 0.02 / std::sqrt(4.0), 0.0015);  // ± 3.4 σ
}

TEST(AndreaBlocks, ZeroBlocksIsTheLessonModelBitForBit) {
  const AndreaConfig c = small_gpt(0);
  const Andrea model(c);
  EXPECT_EQ(model.ln_f(), nullptr);
  EXPECT_EQ(model.named_parameters().size(), 3u);
  EXPECT_EQ(model.num_parameters(), c.embedding_parameters() + c.head_parameters());
  // The same computation as before blocks existed: the input layer, then the head.
  const Tensor ids = some_ids(), targets = some_targets();
  EXPECT_EQ(values_of(model.forward(ids)),
            values_of(matmul(model.input.forward(ids), model.head.weight())));
  EXPECT_EQ(model.loss(ids, targets).item(),
            linear_cross_entropy(model.input.forward(ids), model.head.weight(), targets).item());
  // The same parameter values from the same seed, whatever the block settings.
  AndreaConfig with_heads = c;
  with_heads.heads = 3;  // not read without blocks
  with_heads.mlp_ratio = 2.5;
  const Andrea other(with_heads);
  for (std::size_t i = 0; i < 3; ++i) {
    EXPECT_EQ(values_of(model.named_parameters()[i].second),
              values_of(other.named_parameters()[i].second));
  }
}

TEST(AndreaBlocks, TiedHeadMultipliesByTheTokenTable) {
  AndreaConfig c = small_gpt(1);
  c.tied_head = true;
  const Andrea model(c);
  for (const auto& [name, p] : model.named_parameters()) EXPECT_NE(name, "head.weight");
  EXPECT_EQ(model.num_parameters(), c.parameters());
  EXPECT_EQ(c.parameters(), small_gpt(1).parameters() - 8 * 17);
  const Tensor ids = some_ids();
  const Tensor x = model.hidden_states(ids);
  EXPECT_EQ(values_of(model.forward(ids)),
            values_of(matmul(x, model.input.tok_emb().weight(), {.transpose_b = true})));
  EXPECT_EQ(model.head_weight().shape(), (Shape{8, 17}));
  Error e = testing::expect_error([&] { model.head.forward(x); });
  EXPECT_NE(std::string(e.what()).find("a tied head"), std::string::npos) << e.what();
}

TEST(AndreaBlocks, DropoutActsInTrainingOnlyAndFollowsItsCounter) {
  AndreaConfig c = small_gpt(2);
  c.dropout = 0.3;
  Andrea model(c);
  const Andrea plain(small_gpt(2));  // same seeds, no dropout
  const Tensor ids = some_ids(), targets = some_targets();
  const double reference = plain.loss(ids, targets).item();
  model.set_dropout_counter(5);
  const double first = model.loss(ids, targets).item();
  EXPECT_NE(first, reference);
  EXPECT_EQ(model.loss(ids, targets).item(), first);  // same counter, same masks
  model.set_dropout_counter(6);
  EXPECT_NE(model.loss(ids, targets).item(), first);
  std::int64_t dropouts = 0;
  for (const auto& [name, m] : model.named_modules()) {
    if (m->type_name() == "Dropout") {
      ++dropouts;
      EXPECT_EQ(static_cast<const Dropout*>(m)->counter(), 6u) << name;
    }
  }
  EXPECT_EQ(dropouts, 1 + 2 * 2);
  model.eval();
  EXPECT_EQ(model.loss(ids, targets).item(), reference);
  model.train();
  model.set_dropout_counter(5);
  EXPECT_EQ(model.loss(ids, targets).item(), first);
}

TEST(AndreaBlocks, AMovedModelComputesTheSame) {
  Andrea first(small_gpt(2));
  const Tensor ids = some_ids();
  const std::vector<double> before = values_of(first.forward(ids));
  const void* ln_f = first.ln_f();
  std::vector<Andrea> models;
  models.push_back(std::move(first));
  models.emplace_back(small_gpt(1));  // a reallocation moves the first again
  EXPECT_EQ(models[0].ln_f(), ln_f);
  EXPECT_EQ(values_of(models[0].forward(ids)), before);
  EXPECT_EQ(models[0].named_parameters().size(), 2 + 2 * 12 + 2 + 1u);
}

TEST(AndreaBlocks, BadSettingsAreRefusedNamingTheField) {
  auto message = [](AndreaConfig c) {
    return std::string(testing::expect_error([&] { Andrea{c}; }).what());
  };
  AndreaConfig c = small_gpt(2);
  c.blocks = -1;
  EXPECT_EQ(message(c),
            "AndreaConfig: argument 'blocks': expected a number of blocks in [0, "
            "1024], got -1");
  c = small_gpt(2);
  c.heads = 3;
  EXPECT_EQ(message(c), "Block: argument 'heads': expected a positive divisor of width 8, got 3");
  c = small_gpt(1);
  c.mlp_ratio = NAN;
  EXPECT_NE(message(c).find("'mlp_ratio'"), std::string::npos);
  c.mlp_ratio = 0.01;  // rounds to a hidden width of 0
  EXPECT_NE(message(c).find("'mlp_ratio'"), std::string::npos);
  for (double p : {1.0, -0.1, double(NAN), double(INFINITY)}) {
    c = small_gpt(1);
    c.dropout = p;
    EXPECT_NE(message(c).find("AndreaConfig: argument 'dropout': expected a probability in [0, "
                              "1)"),
              std::string::npos)
        << p;
    EXPECT_NE(std::string(testing::expect_error([&] { Dropout{p}; }).what())
                  .find("Dropout: argument 'p'"),
              std::string::npos);
  }
  c = small_gpt(2);
  c.d_model = 1 << 20;  // blocks' parameters × 1024 blocks would wrap in bytes
  c.blocks = 1024;
  c.heads = 1;
  c.mlp_ratio = 1024;
  EXPECT_NE(message(c).find("passes INT64_MAX"), std::string::npos) << message(c);
}

}  // namespace
}  // namespace mg::andrea
