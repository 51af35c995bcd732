// Modules as building blocks: moves keep every registration, named_modules and train/eval walk
// the tree, registration refuses what a move would break, Linear / LayerNorm / MLP /
// CausalSelfAttention / Block equal the same computation written with the ops (the attention
// composed, not fused) in values and every gradient, and ModuleList / Sequential stack them.
#include <gtest/gtest.h>

#include <cmath>
#include <memory>
#include <vector>

#include "expect_error.h"
#include "minigraph/gradcheck.h"
#include "minigraph/minigraph.h"
#include "minigraph/ops/attention/attention.h"
#include "minigraph/ops/layer_norm/layer_norm.h"
#include "minigraph/ops/matmul/matmul.h"
#include "minigraph/ops/unary/unary.h"

namespace mg {
namespace {

using testing::expect_error;

BlockOptions small_block(DType dtype = DType::f64) {
  return {.width = 8,
          .heads = 2,
          .mlp_ratio = 4.0,
          .context = 16,
          .depth = 2,
          .seed = 7,
          .dtype = dtype};
}

double largest_difference(const Tensor& a, const Tensor& b) {
  const std::vector<double> x = a.to(DType::f64).contiguous().to_vector<double>();
  const std::vector<double> y = b.to(DType::f64).contiguous().to_vector<double>();
  EXPECT_EQ(x.size(), y.size());
  double worst = 0;
  for (std::size_t i = 0; i < x.size(); ++i) worst = std::max(worst, std::abs(x[i] - y[i]));
  return worst;
}

// The block written out with the ops: Linear as matmul + add, attention composed.
Tensor linear_by_ops(const Linear& l, const Tensor& x) {
  return matmul(x, l.weight().t()) + l.bias();
}
Tensor block_by_ops(const Block& b, const Tensor& x) {
  const std::int64_t batch = x.shape()[0], length = x.shape()[1], width = x.shape()[2];
  const std::int64_t heads = b.attn.heads(), hd = width / heads;
  const Tensor n1 = layer_norm(x, {width}, b.ln_1.weight(), b.ln_1.bias());
  const Tensor qkv = linear_by_ops(b.attn.c_attn, n1);
  auto head = [&](std::int64_t i) {
    return qkv.narrow(2, i * width, width).reshape({batch, length, heads, hd}).transpose(1, 2);
  };
  const Tensor y =
      scaled_dot_product_attention_composed(head(0), head(1), head(2), {.is_causal = true});
  const Tensor h =
      x + linear_by_ops(b.attn.c_proj, y.transpose(1, 2).reshape({batch, length, width}));
  const Tensor n2 = layer_norm(h, {width}, b.ln_2.weight(), b.ln_2.bias());
  return h + linear_by_ops(b.mlp.c_proj, gelu(linear_by_ops(b.mlp.c_fc, n2), "tanh"));
}

// Each parameter's gradient of sum(out * r) from `forward`, in named_parameters() order.
std::vector<Tensor> parameter_grads(const Module& m, const Tensor& out, const Tensor& r) {
  for (auto& [name, p] : m.named_parameters()) p.zero_grad();
  (out * r).sum().backward();
  std::vector<Tensor> grads;
  for (auto& [name, p] : m.named_parameters()) grads.push_back(p.grad().clone());
  return grads;
}

// Every parameter drawn at random: the biases and norms start at zeros and ones, which would
// hide a bias left out or a norm's weight applied twice.
void randomise(Module& m, std::uint64_t seed) {
  NoGradGuard no_grad;
  for (auto& [name, p] : m.named_parameters())
    p.copy_(Tensor::normal(p.shape(), 0, 0.5, ++seed, p.dtype()));
}

TEST(Modules, BlockEqualsTheOpsInValuesAndEveryGradient) {
  Block block(small_block());
  randomise(block, 40);
  const Tensor x = Tensor::normal({2, 5, 8}, 0, 1, 3, DType::f64);
  const Tensor r = Tensor::normal({2, 5, 8}, 0, 1, 4, DType::f64);
  const Tensor out = block.forward(x);
  const Tensor expected = block_by_ops(block, x);
  EXPECT_LE(largest_difference(out, expected), 1e-12);
  const std::vector<Tensor> got = parameter_grads(block, out, r);
  const std::vector<Tensor> want = parameter_grads(block, block_by_ops(block, x), r);
  ASSERT_EQ(got.size(), 12u);  // 2 layer norms and 4 linears, weight and bias each
  for (std::size_t i = 0; i < got.size(); ++i) {
    EXPECT_LE(largest_difference(got[i], want[i]), 1e-12) << block.named_parameters()[i].first;
  }
}

TEST(Modules, BlockGradcheckInX) {
  Block block(small_block());
  randomise(block, 60);
  Tensor x = Tensor::normal({2, 4, 8}, 0, 1, 5, DType::f64);
  x.set_requires_grad(true);
  const GradcheckReport report =
      gradcheck([&](const std::vector<Tensor>& in) { return block.forward(in[0]); }, {x}, {"x"});
  EXPECT_TRUE(report.passed()) << report.str();
}

TEST(Modules, BlockNamesAndTypesAsGpt2s) {
  const Block block(small_block());
  std::vector<std::string> names, types;
  for (auto& [name, m] : block.named_modules()) {
    names.push_back(name);
    types.push_back(m->type_name());
  }
  EXPECT_EQ(names, (std::vector<std::string>{"", "ln_1", "attn", "attn.c_attn", "attn.c_proj",
                                             "attn.resid_dropout", "ln_2", "mlp", "mlp.c_fc",
                                             "mlp.c_proj", "mlp.dropout"}));
  EXPECT_EQ(types, (std::vector<std::string>{"Block", "LayerNorm", "CausalSelfAttention", "Linear",
                                             "Linear", "Dropout", "LayerNorm", "MLP", "Linear",
                                             "Linear", "Dropout"}));
  EXPECT_EQ(block.named_parameters()[2].first, "attn.c_attn.weight");
  EXPECT_EQ(block.attn.c_attn.weight().shape(), (Shape{24, 8}));  // [out, in], torch.nn's
  EXPECT_EQ(block.mlp.c_fc.out_features(), 32);
  // GPT-2 at D = 768 has 7,087,872 parameters a block.
  const Block gpt2_sized({.width = 768, .heads = 12});
  EXPECT_EQ(gpt2_sized.num_parameters(), 7087872);
}

TEST(Modules, GPT2InitialisationScalesTheResidualProjections) {
  BlockOptions options = small_block();
  options.width = 64;
  options.depth = 8;
  const Block block(options);
  auto stddev = [](const Tensor& t) {
    const std::vector<double> v = t.to_vector<double>();
    double s = 0;
    for (double e : v) s += e * e;
    return std::sqrt(s / static_cast<double>(v.size()));
  };
  EXPECT_NEAR(stddev(block.mlp.c_fc.weight()), 0.02, 0.002);
  EXPECT_NEAR(stddev(block.mlp.c_proj.weight()), 0.02 / 4, 0.0005);  // 0.02 / sqrt(2 * 8)
  EXPECT_NEAR(stddev(block.attn.c_proj.weight()), 0.02 / 4, 0.0005);
  EXPECT_EQ(block.attn.c_attn.bias().to_vector<double>(), std::vector<double>(192, 0.0));
  // Each Linear draws from its own seed.
  EXPECT_NE(block.attn.c_attn.weight().to_vector<double>()[0],
            block.mlp.c_fc.weight().to_vector<double>()[0]);
}

TEST(Modules, AMovedModuleKeepsItsParametersAndComputesTheSame) {
  Block first(small_block());
  const Tensor x = Tensor::normal({1, 3, 8}, 0, 1, 9, DType::f64);
  const Tensor before = first.forward(x);
  const void* data = first.attn.c_attn.weight().raw_data();
  Block moved(std::move(first));
  ASSERT_EQ(moved.named_parameters().size(), 12u);
  EXPECT_EQ(moved.named_parameters()[2].second.raw_data(), data);
  EXPECT_EQ(largest_difference(moved.forward(x), before), 0.0);
  std::vector<Block> stack;  // reallocations move the blocks
  for (int i = 0; i < 5; ++i) stack.emplace_back(small_block());
  for (const Block& b : stack) EXPECT_EQ(b.named_modules().size(), 11u);
  EXPECT_EQ(stack[4].named_parameters()[0].second.raw_data(), stack[4].ln_1.weight().raw_data());
}

TEST(Modules, TrainAndEvalReachEveryModule) {
  ModuleList<Block> blocks;
  blocks.push_back(Block(small_block()));
  blocks.push_back(Block(small_block()));
  EXPECT_TRUE(blocks[1].mlp.c_fc.is_training());
  blocks.eval();
  for (auto& [name, m] : blocks.named_modules()) EXPECT_FALSE(m->is_training()) << name;
  blocks[0].train();
  EXPECT_TRUE(blocks[0].mlp.c_proj.is_training());
  EXPECT_FALSE(blocks[1].mlp.c_proj.is_training());
}

TEST(Modules, ModuleListAndSequentialStackLayers) {
  ModuleList<Block> blocks;
  for (std::uint64_t i = 0; i < 2; ++i) {
    BlockOptions options = small_block();
    options.seed = 100 + 4 * i;
    blocks.push_back(Block(options));
  }
  EXPECT_EQ(blocks.named_parameters()[12].first, "1.ln_1.weight");
  const Tensor x = Tensor::normal({2, 3, 8}, 0, 1, 11, DType::f64);
  Tensor expected = x;
  for (const Block& b : blocks) expected = b.forward(expected);
  ModuleList<Block> moved(std::move(blocks));
  Tensor got = x;
  for (const Block& b : moved) got = b.forward(got);
  EXPECT_EQ(largest_difference(got, expected), 0.0);

  Sequential mlp;
  const Linear& fc = mlp.push_back(Linear(8, 16, {.seed = 1, .dtype = DType::f64}));
  mlp.push_back(Linear(16, 4, {.bias = false, .seed = 2, .dtype = DType::f64}));
  EXPECT_EQ(mlp.named_parameters().size(), 3u);
  EXPECT_EQ(mlp.named_parameters()[2].first, "1.weight");
  const Tensor w2 = mlp.named_parameters()[2].second;
  EXPECT_LE(largest_difference(mlp.forward(x), matmul(linear_by_ops(fc, x), w2.t())), 1e-14);
}

TEST(Modules, LinearAndLayerNormRefuseWhatDoesNotFit) {
  const Linear linear(8, 4, {.dtype = DType::f64});
  Error e = expect_error([&] { linear.forward(Tensor::zeros({2, 5}, DType::f64)); });
  EXPECT_EQ(e.op(), "Linear");
  EXPECT_NE(std::string(e.what()).find("in_features = 8"), std::string::npos) << e.what();
  EXPECT_EQ(expect_error([] { Linear(0, 4); }).op(), "Linear");
  EXPECT_EQ(expect_error([] { Linear(2, 4, {.init_std = NAN}); }).op(), "Linear");
  EXPECT_EQ(expect_error([] { LayerNorm(-1); }).op(), "LayerNorm");
  EXPECT_EQ(expect_error([] { LayerNorm(4, -1e-5); }).op(), "LayerNorm");
}

TEST(Modules, BlockOptionsAreChecked) {
  auto refused = [](BlockOptions o, const char* field) {
    const Error e = expect_error([&] { Block b(o); });
    EXPECT_EQ(e.op(), "Block");
    EXPECT_EQ(e.argument(), field) << e.what();
  };
  BlockOptions o = small_block();
  o.heads = 3;
  refused(o, "heads");
  o = small_block();
  o.mlp_ratio = NAN;
  refused(o, "mlp_ratio");
  o.mlp_ratio = 1e300;
  refused(o, "mlp_ratio");
  o = small_block();
  o.depth = 0;
  refused(o, "depth");
  const CausalSelfAttention attn(small_block());
  EXPECT_EQ(expect_error([&] {
              attn.forward(Tensor::zeros({1, 3, 6}, DType::f64));
            }).op(),
            "CausalSelfAttention");
  // Past the context: the fused attention's own check.
  expect_error([&] { attn.forward(Tensor::zeros({1, 17, 8}, DType::f64)); });
}

// Registrations a move would break, or names that would collide in a state dict.
class Misregistering : public Module {
 public:
  Tensor a = Tensor::zeros({2});
  Tensor b = Tensor::zeros({2});
  void twice() {
    register_parameter("a", a);
    register_parameter("a", b);
  }
  void dotted() { register_parameter("x.y", a); }
  void elsewhere(Tensor& t) { register_parameter("far", t); }
};

TEST(Modules, RegistrationRefusesDuplicatesDotsAndNonMembers) {
  Misregistering m;
  EXPECT_EQ(expect_error([&] { m.twice(); }).op(), "register_parameter");
  EXPECT_EQ(m.named_parameters().size(), 1u);
  EXPECT_EQ(expect_error([&] { m.dotted(); }).argument(), "name");
  auto far = std::make_unique<Tensor>(Tensor::zeros({2}));  // on the heap, m on the stack
  const Error e = expect_error([&] { m.elsewhere(*far); });
  EXPECT_NE(std::string(e.what()).find("a member of the module"), std::string::npos) << e.what();
}

}  // namespace
}  // namespace mg
