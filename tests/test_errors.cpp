// Item by item, the errors of bad input: each is an mg::Error naming op, argument, what was
// expected and what came, and none leaves a parameter or gradient changed.
#include <gtest/gtest.h>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using andrea::AndreaConfig;

using testing::expect_error;
using testing::expect_error_containing;

AndreaConfig tiny() {
  AndreaConfig c;
  c.vocab_size = 11;
  c.d_model = 4;
  c.context = 6;
  return c;
}

TEST(Errors, IdAtOrPastVocabularyNamesIdPositionAndV) {
  Tensor table = Tensor::zeros({8449, 2});
  Tensor ids = Tensor::from_vector<std::int64_t>({1, 2, 3, 8449}, {2, 2});
  Error e = expect_error([&] { embedding(table, ids); });
  EXPECT_STREQ(e.what(),
               "embedding: argument 'ids': expected ids in [0, 8449) (the table's rows), got id "
               "8449 at position [1, 1]");
}

TEST(Errors, NegativeId) {
  Tensor table = Tensor::zeros({5, 2});
  Tensor ids = Tensor::from_vector<std::int32_t>({0, -3}, {2});
  Error e = expect_error([&] { embedding(table, ids); });
  EXPECT_EQ(e.argument(), "ids");
  EXPECT_EQ(e.actual(), "id -3 at position [1]");
}

TEST(Errors, PositionsPastTheTable) {
  Tensor table = Tensor::zeros({1024, 2});
  Error e = expect_error([&] { position_embedding(table, 1000, 25); });
  EXPECT_STREQ(e.what(),
               "position_embedding: argument 'T + offset': expected at most T_max = 1024 (the "
               "table's rows), got T + offset = 1000 + 25 = 1025");
}

TEST(Errors, AddShapeMismatch) {
  Error e = expect_error([&] { add(Tensor::zeros({2, 3}), Tensor::zeros({4, 3})); });
  EXPECT_STREQ(e.what(),
               "add: argument 'b': expected a shape broadcastable with a's [2, 3], got [4, 3]");
}

TEST(Errors, MatmulShapeMismatch) {
  Error e = expect_error([&] { matmul(Tensor::zeros({2, 3}), Tensor::zeros({4, 5})); });
  EXPECT_EQ(e.op(), "matmul");
  EXPECT_EQ(e.argument(), "b");
  EXPECT_EQ(e.actual(), "4 (a [2, 3], b [4, 5])");
}

TEST(Errors, FloatIdsAndIntegerTables) {
  Error float_ids = expect_error([&] { embedding(Tensor::zeros({5, 2}), Tensor::zeros({3})); });
  EXPECT_EQ(float_ids.argument(), "ids");
  EXPECT_EQ(float_ids.actual(), "f32");
  Tensor int_table = Tensor::from_vector<std::int64_t>({1, 2}, {1, 2});
  Error int_table_error =
      expect_error([&] { embedding(int_table, Tensor::from_vector<std::int64_t>({0}, {1})); });
  EXPECT_EQ(int_table_error.argument(), "table");
  EXPECT_EQ(int_table_error.actual(), "i64");
}

TEST(Errors, MixingDtypes) {
  Error e =
      expect_error([&] { add(Tensor::zeros({2}, DType::f32), Tensor::zeros({2}, DType::f64)); });
  EXPECT_STREQ(e.what(), "add: argument 'b': expected dtype f32 (as the other inputs), got f64");
}

// The dispatcher's device check, without needing a second device: the check apply_op runs,
// given devices (Cuda.MixingDevicesIsAnError runs it end to end where a GPU exists).
TEST(Errors, InputsOnDifferentDevices) {
  const std::vector<std::string> names{"a", "b", "c"};
  const std::vector<Device> same{Device::cpu(), Device::cpu(), Device::cpu()};
  EXPECT_EQ(common_device("add", names, 3, [&](std::size_t i) { return same[i]; }), Device::cpu());
  const std::vector<Device> mixed{Device::cpu(), Device::cpu(), Device::cuda(1)};
  Error e = expect_error(
      [&] { common_device("add", names, 3, [&](std::size_t i) { return mixed[i]; }); });
  EXPECT_STREQ(e.what(), "add: argument 'c': expected device cpu (as 'a'), got cuda:1");
  const std::vector<Device> gpu_first{Device::cuda(0), Device::cpu()};
  e = expect_error(
      [&] { common_device("matmul", names, 2, [&](std::size_t i) { return gpu_first[i]; }); });
  EXPECT_STREQ(e.what(), "matmul: argument 'b': expected device cuda:0 (as 'a'), got cpu");
}

TEST(Errors, BackwardFromNonScalarWithoutGradient) {
  andrea::InputLayer layer(tiny());
  Tensor x = layer.forward(Tensor::from_vector<std::int64_t>({1, 2}, {1, 2}));
  Error e = expect_error([&] { x.backward(); });
  EXPECT_STREQ(e.what(),
               "backward: argument 'grad': expected an upstream gradient for a non-scalar "
               "output, got none, for shape [1, 2, 4]");
}

TEST(Errors, BackwardThroughReleasedGraph) {
  andrea::InputLayer layer(tiny());
  Tensor x = layer.forward(Tensor::from_vector<std::int64_t>({1, 2}, {1, 2}));
  Tensor g = Tensor::ones(x.shape());
  x.backward(g);
  Error e = expect_error([&] { x.backward(g); });
  EXPECT_EQ(e.argument(), "graph");
}

// After any error, the parameters and gradients are as they were.
TEST(Errors, NoParameterOrGradientChangesAfterAnError) {
  andrea::Andrea model(tiny());
  Tensor good = Tensor::from_vector<std::int64_t>({1, 2, 3}, {1, 3});
  Tensor logits = model.forward(good);
  logits.backward(Tensor::ones(logits.shape()));
  std::vector<std::vector<float>> values, grads;
  for (auto& [name, p] : model.named_parameters()) {
    values.push_back(p.to_vector<float>());
    grads.push_back(p.grad().to_vector<float>());
  }
  Tensor bad = Tensor::from_vector<std::int64_t>({1, 11, 3}, {1, 3});
  expect_error_containing([&] { model.forward(bad); }, "got id 11 at position [0, 1]");
  expect_error_containing([&] { model.forward(good, /*offset=*/4); }, "offset");
  Tensor again = model.forward(good);
  expect_error_containing(
      [&] {
        again.backward(Tensor::ones({1, 3, 10}));
      },
      "backward: argument 'grad'");
  again.backward(Tensor::ones(again.shape()), true);
  expect_error_containing([&] { again.backward(Tensor::ones(again.shape(), DType::f64)); },
                          "backward: argument 'grad'");
  std::size_t i = 0;
  for (auto& [name, p] : model.named_parameters()) {
    EXPECT_EQ(p.to_vector<float>(), values[i]) << name;
    std::vector<float> doubled = grads[i];
    for (auto& v : doubled) v *= 2;  // exactly one successful backward since
    EXPECT_EQ(p.grad().to_vector<float>(), doubled) << name;
    ++i;
  }
}

}  // namespace
}  // namespace mg
