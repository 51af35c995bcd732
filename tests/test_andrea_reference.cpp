// ANDREA against an independent implementation: tools/interop/make_gpt_reference.py builds small
// models with torch.nn (random weights), and saves the weights, a batch, and PyTorch's logits,
// loss and gradients (tests/fixtures/andrea_reference_*). Each file is loaded into minigraph's
// Andrea, which must give the same logits, loss and gradient of every parameter: to 1e-10
// relative in f64, 1e-5 in f32 (the largest difference over the tensor's largest magnitude).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "minigraph/minigraph.h"

namespace mg::andrea {
namespace {

struct Reference {
  const char* file;
  double tolerance;
};

std::string fixture_path(const std::string& name) {
  return std::string(MINIGRAPH_SOURCE_DIR) + "/tests/fixtures/andrea_reference_" + name +
         ".safetensors";
}

// max |a - b| / max |b|, over tensors of one shape.
double relative_difference(const Tensor& actual, const Tensor& expected) {
  EXPECT_EQ(shape_str(actual.shape()), shape_str(expected.shape()));
  const std::vector<double> a = actual.to(DType::f64).to_vector<double>();
  const std::vector<double> b = expected.to(DType::f64).to_vector<double>();
  if (a.size() != b.size()) return INFINITY;
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return diff / std::max(scale, 1e-300);
}

AndreaConfig config_of(const SafetensorsFile& file, DType dtype) {
  const auto& m = file.metadata();
  AndreaConfig c;
  c.vocab_size = std::stoll(m.at("vocab_size"));
  c.d_model = std::stoll(m.at("d_model"));
  c.context = std::stoll(m.at("context"));
  c.heads = std::stoll(m.at("heads"));
  c.mlp_ratio = std::stod(m.at("mlp_ratio"));
  c.blocks = std::stoll(m.at("blocks"));
  c.tied_head = m.at("tied_head") == "1";
  c.dtype = dtype;
  return c;
}

class AndreaReference : public ::testing::TestWithParam<Reference> {};

TEST_P(AndreaReference, LogitsLossAndEveryGradientMatchTorchNn) {
  const std::string name = GetParam().file;
  const DType dtype = name.ends_with("f64") ? DType::f64 : DType::f32;
  const double tolerance = GetParam().tolerance;
  const SafetensorsFile file = SafetensorsFile::open(fixture_path(name));
  Andrea model(config_of(file, dtype));
  StateDict weights;
  for (const auto& [param, tensor] : file.tensors()) {
    if (param.starts_with("param.")) weights.emplace_back(param.substr(6), tensor);
  }
  model.load_state_dict(weights);  // strict: the names and shapes are exactly the model's
  const Tensor ids = file.tensor("ids"), targets = file.tensor("targets");

  {
    NoGradGuard no_grad;
    EXPECT_LE(relative_difference(model.forward(ids), file.tensor("logits")), tolerance);
  }
  const Tensor loss = model.loss(ids, targets);
  EXPECT_LE(relative_difference(loss, file.tensor("loss")), tolerance);
  loss.backward();
  for (const auto& [param, tensor] : model.named_parameters()) {
    ASSERT_TRUE(tensor.grad().defined()) << param;
    EXPECT_LE(relative_difference(tensor.grad(), file.tensor("grad." + param)), tolerance) << param;
  }
}

INSTANTIATE_TEST_SUITE_P(
    Fixtures, AndreaReference,
    ::testing::Values(Reference{"0blocks_f64", 1e-10}, Reference{"1blocks_f64", 1e-10},
                      Reference{"2blocks_f64", 1e-10}, Reference{"1blocks_tied_f64", 1e-10},
                      Reference{"0blocks_f32", 1e-5}, Reference{"1blocks_f32", 1e-5},
                      Reference{"2blocks_f32", 1e-5}, Reference{"1blocks_tied_f32", 1e-5}),
    [](const auto& info) { return std::string(info.param.file); });

}  // namespace
}  // namespace mg::andrea
