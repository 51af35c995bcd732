// The backward engine: accumulation, reuse of a tensor, graph release, grad mode, atomicity.
#include <gtest/gtest.h>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

Tensor param(std::vector<double> values, Shape shape) {
  Tensor t = Tensor::from_vector(values, shape);
  t.set_requires_grad(true);
  return t;
}

TEST(Autograd, TensorUsedTwiceGetsBothContributions) {
  Tensor x = param({1, 2, 3}, {3});
  Tensor g = Tensor::from_vector<double>({0.5, -1, 2}, {3});
  add(x, x).backward(g);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, -2, 4}));
}

// A non-leaf used twice must accumulate too: z = y + y with y = x + x gives dz/dx = 4, and an
// engine that assigns a non-leaf's gradient instead of adding to it gives 2.
TEST(Autograd, NonLeafUsedTwiceGetsBothContributions) {
  Tensor x = param({1, 2, 3}, {3});
  Tensor y = add(x, x);
  Tensor z = add(y, y);
  z.backward(Tensor::from_vector<double>({0.5, -1, 2}, {3}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{2, -4, 8}));
  // Reached through two different paths that meet again: w = y + x, d w / d x = 2 + 1.
  Tensor a = param({1, 1}, {2});
  Tensor b = add(a, a);
  add(b, a).backward(Tensor::from_vector<double>({1, 10}, {2}));
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{3, 30}));
}

TEST(Autograd, GradientsAccumulateOverBackwardCallsUntilZeroGrad) {
  Tensor x = param({1, 2}, {2});
  Tensor g = Tensor::from_vector<double>({1, 3}, {2});
  add(x, x).backward(g);
  add(x, x).backward(g);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{4, 12}));
  x.zero_grad();
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, ScalarRootSeedsOne) {
  Tensor a = param({2}, {1, 1});
  Tensor b = param({5}, {1, 1});
  matmul(a, b).backward();
  EXPECT_EQ(a.grad().item(), 5.0);
  EXPECT_EQ(b.grad().item(), 2.0);
}

TEST(Autograd, NonScalarWithoutUpstreamGradientIsAnError) {
  Tensor x = param({1, 2}, {2});
  Tensor y = add(x, x);
  try {
    y.backward();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "backward");
    EXPECT_EQ(e.argument(), "grad");
    EXPECT_NE(std::string(e.what()).find("shape [2]"), std::string::npos) << e.what();
  }
  EXPECT_FALSE(x.grad().defined());
}

TEST(Autograd, GraphIsReleasedAfterBackwardUnlessRetained) {
  Tensor x = param({1}, {1});
  Tensor kept = add(x, x);
  kept.backward(Tensor(), /*retain_graph=*/true);
  kept.backward();
  EXPECT_EQ(x.grad().item(), 4.0);

  Tensor y = add(x, x);
  y.backward();
  Tensor grad_before = x.grad().clone();
  try {
    y.backward();
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("released by an earlier backward"), std::string::npos)
        << e.what();
  }
  EXPECT_EQ(x.grad().to_vector<double>(), grad_before.to_vector<double>());
}

TEST(Autograd, FailedBackwardLeavesEveryGradientUntouched) {
  Tensor a = param({1, 2}, {2});
  Tensor b = param({3, 4}, {2});
  add(a, b).backward(Tensor::ones({2}, DType::f64));
  auto a_before = a.grad().to_vector<double>();
  // Wrong-shaped upstream gradient: rejected before any leaf changes.
  testing::expect_error_containing([&] { add(a, b).backward(Tensor::ones({3}, DType::f64)); },
                                   "backward: argument 'grad'");
  testing::expect_error_containing([&] { add(a, b).backward(Tensor::ones({2}, DType::f32)); },
                                   "backward: argument 'grad'");
  EXPECT_EQ(a.grad().to_vector<double>(), a_before);
}

TEST(Autograd, NoGradGuardRecordsNothing) {
  Tensor x = param({1, 2}, {2});
  {
    NoGradGuard no_grad;
    Tensor y = add(x, x);
    EXPECT_FALSE(y.requires_grad());
    EXPECT_EQ(y.grad_fn(), nullptr);
  }
  EXPECT_TRUE(grad_enabled());
  EXPECT_TRUE(add(x, x).requires_grad());
}

TEST(Autograd, ConstantsNeedNoGradient) {
  Tensor c = Tensor::from_vector<double>({1, 2}, {2});
  Tensor y = add(c, c);
  EXPECT_FALSE(y.requires_grad());
  testing::expect_error_containing([&] { y.backward(Tensor::ones({2}, DType::f64)); }, "backward");
}

TEST(Autograd, UpstreamGradientIsNotAliasedByALeaf) {
  Tensor x = param({1, 2}, {2});
  Tensor upstream = Tensor::from_vector<double>({1, 1}, {2});
  x.backward(upstream);
  upstream.set_flat(0, 100);
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 1}));
}

TEST(Autograd, RecordedGraphCanBeWalked) {
  Tensor table = param({1, 2, 3, 4, 5, 6}, {3, 2});
  Tensor ids = Tensor::from_vector<std::int64_t>({2, 0}, {2});
  Tensor w = param({1, 0, 0, 1}, {2, 2});
  Tensor y = matmul(add(embedding(table, ids), position_embedding(table, 2)), w);
  auto nodes = graph_nodes(y);
  std::vector<std::string> names;
  for (const Node* n : nodes) names.push_back(n->op->name);
  // position_embedding is a view: narrow.
  EXPECT_EQ(names, (std::vector<std::string>{"embedding", "narrow", "add", "matmul"}));
  EXPECT_EQ(nodes.back()->inputs[1].is_same(w), true);
  EXPECT_EQ(nodes.back()->inputs[0].grad_fn().get(), nodes[2]);
}

// The hook data-parallel training starts reductions from: a leaf is reported once, as soon as
// no node left to run adds to its gradient, with the pass's whole gradient of it.
TEST(Autograd, LeafGradReadyReportsEachLeafOnceAsSoonAsItsGradientIsComplete) {
  Tensor x = param({1, 2}, {2});
  Tensor w1 = param({3, 4}, {2});
  Tensor w2 = param({5, 6}, {2});
  // loss = sum((x * w1 + x) * w2): w2 is finished by the last node, x by the first (twice).
  Tensor h = add(mul(x, w1), x);
  Tensor loss = mul(h, w2).sum();
  std::vector<std::string> order;
  std::vector<std::vector<double>> reported;
  const std::vector<std::pair<std::string, Tensor>> names{{"x", x}, {"w1", w1}, {"w2", w2}};
  backward(loss, Tensor(), false, [&](const Tensor& leaf, const Tensor& grad) {
    for (const auto& [name, t] : names) {
      if (t.is_same(leaf)) order.push_back(name);
    }
    // Nothing is written before the pass ends.
    EXPECT_FALSE(leaf.grad().defined());
    reported.push_back(grad.to_vector<double>());
  });
  ASSERT_EQ(order.size(), 3u);
  EXPECT_EQ(order[0], "w2");  // ready while mul(x, w1) and the add are still to run
  for (std::size_t i = 0; i < order.size(); ++i) {
    for (const auto& [name, t] : names) {
      if (name == order[i]) {
        EXPECT_EQ(reported[i], t.grad().to_vector<double>()) << name;
      }
    }
  }
  // d/dx = w2 * (w1 + 1) = {20, 30}: both paths into x are in the one report.
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{20, 30}));
}

TEST(Autograd, LeafGradReadyReportsALeafRootAndALeafUsedTwiceInOneNode) {
  Tensor x = param({1, 2}, {2});
  int calls = 0;
  backward(add(x, x), Tensor::from_vector<double>({1, 1}, {2}), false,
           [&](const Tensor& leaf, const Tensor& grad) {
             ++calls;
             EXPECT_TRUE(leaf.is_same(x));
             EXPECT_EQ(grad.to_vector<double>(), (std::vector<double>{2, 2}));
           });
  EXPECT_EQ(calls, 1);
  Tensor y = param({1, 2}, {2});
  calls = 0;
  backward(y, Tensor::from_vector<double>({3, 4}, {2}), false,
           [&](const Tensor&, const Tensor& grad) {
             ++calls;
             EXPECT_EQ(grad.to_vector<double>(), (std::vector<double>{3, 4}));
           });
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(y.grad().to_vector<double>(), (std::vector<double>{3, 4}));
}

TEST(Autograd, ALeafGradReadyHookThatThrowsLeavesEveryGradientUntouched) {
  Tensor a = param({1, 2}, {2});
  Tensor b = param({3, 4}, {2});
  testing::expect_error_containing(
      [&] {
        backward(mul(a, b).sum(), Tensor(), false, [](const Tensor&, const Tensor&) {
          throw Error("hook", "leaf", "nothing", "a test's refusal");
        });
      },
      "a test's refusal");
  EXPECT_FALSE(a.grad().defined());
  EXPECT_FALSE(b.grad().defined());
}

}  // namespace
}  // namespace mg
