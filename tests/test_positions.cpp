// Positions, learned or sinusoidal: the fixed table's values, that it is a buffer (no
// parameter, no gradient, moved with the module, outside the state dict), and the ANDREA
// input layer built on either.
#include <gtest/gtest.h>

#include <cmath>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

TEST(Positions, SinusoidalTableHasTheTransformerValues) {
  Tensor table = sinusoidal_positions(50, 6, DType::f64);
  ASSERT_EQ(table.shape(), (Shape{50, 6}));
  auto v = table.to_vector<double>();
  // Row 0: sin 0 = 0 in even columns, cos 0 = 1 in odd ones.
  for (int i = 0; i < 6; ++i) EXPECT_EQ(v[i], i % 2 == 0 ? 0.0 : 1.0) << i;
  // Row 7, columns 2 and 3: frequency 10000^(-2/6).
  const double angle = 7 * std::pow(10000.0, -2.0 / 6.0);
  EXPECT_DOUBLE_EQ(v[7 * 6 + 2], std::sin(angle));
  EXPECT_DOUBLE_EQ(v[7 * 6 + 3], std::cos(angle));
  EXPECT_DOUBLE_EQ(v[49 * 6 + 0], std::sin(49.0));
  EXPECT_DOUBLE_EQ(v[49 * 6 + 1], std::cos(49.0));
}

TEST(Positions, OddWidthEndsWithASineColumn) {
  auto v = sinusoidal_positions(3, 5, DType::f64).to_vector<double>();
  EXPECT_DOUBLE_EQ(v[2 * 5 + 4], std::sin(2 * std::pow(10000.0, -4.0 / 5.0)));
}

TEST(Positions, SinusoidalIsABufferNotAParameter) {
  andrea::AndreaConfig c;
  c.vocab_size = 11;
  c.d_model = 4;
  c.context = 6;
  c.positions = PositionKind::sinusoidal;
  andrea::Andrea model(c);
  std::vector<std::string> names;
  for (auto& [name, p] : model.named_parameters()) names.push_back(name);
  EXPECT_EQ(names, (std::vector<std::string>{"input.tok_emb.weight", "head.weight"}));
  auto buffers = model.named_buffers();
  ASSERT_EQ(buffers.size(), 1u);
  EXPECT_EQ(buffers[0].first, "input.pos_emb.table");
  EXPECT_FALSE(buffers[0].second.requires_grad());
  EXPECT_EQ(c.position_embedding_parameters(), 0);
  EXPECT_EQ(model.state_dict().size(), 2u);
  EXPECT_EQ(andrea::config_metadata(c).at("positions"), "sinusoidal");

  // x_t = tok_emb[id_t] + table[t], and a backward reaches the token table only.
  Tensor ids = Tensor::from_vector<std::int64_t>({3, 3, 10}, {1, 3});
  Tensor x = model.input.forward(ids);
  auto xv = x.to_vector<float>();
  auto tok = model.input.tok_emb().weight().to_vector<float>();
  auto pos = sinusoidal_positions(6, 4).to_vector<float>();
  const std::int64_t id[3] = {3, 3, 10};
  for (int t = 0; t < 3; ++t) {
    for (int d = 0; d < 4; ++d) EXPECT_EQ(xv[t * 4 + d], tok[id[t] * 4 + d] + pos[t * 4 + d]);
  }
  model.forward(ids).sum().backward();
  EXPECT_TRUE(model.input.tok_emb().weight().grad().defined());
  EXPECT_FALSE(model.input.pos_emb().weight().grad().defined());
}

TEST(Positions, KindNamesParseAndBadNamesAreClearErrors) {
  EXPECT_EQ(parse_position_kind("learned"), PositionKind::learned);
  EXPECT_EQ(parse_position_kind("sinusoidal"), PositionKind::sinusoidal);
  EXPECT_EQ(position_kind_name(PositionKind::sinusoidal), "sinusoidal");
  testing::expect_error_containing([&] { return parse_position_kind("rotary"); }, "learned or sinusoidal");
  testing::expect_error_containing([&] { return sinusoidal_positions(0, 4); }, "positive sizes");
  testing::expect_error_containing([&] { return sinusoidal_positions(std::int64_t{1} << 40, std::int64_t{1} << 40); }, "max_positions");
}

}  // namespace
}  // namespace mg
