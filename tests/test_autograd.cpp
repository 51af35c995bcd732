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
  EXPECT_TRUE(nodes.back()->inputs[1].leaf().is_same(w));
  EXPECT_EQ(nodes.back()->inputs[0].grad_fn().get(), nodes[2]);
  // What each node kept: add reads nothing, matmul both inputs, embedding its ids.
  EXPECT_FALSE(nodes[2]->inputs[0].saved().tensor.defined());
  EXPECT_TRUE(nodes.back()->inputs[1].saved().tensor.is_same(w));
  EXPECT_TRUE(nodes[0]->inputs[1].saved().tensor.is_same(ids));
  EXPECT_FALSE(nodes[0]->inputs[0].saved().tensor.defined());
}

// Only what a backward reads is saved and version-checked (derivatives.yaml's rule): add
// reads neither input, so a write into one between forward and backward is legal; mul reads
// both, so it is refused, naming the op and the input, with every gradient left as it was.
TEST(Autograd, AWriteIntoAnInputIsRefusedOnlyWhereTheBackwardReadsIt) {
  Tensor a = param({1, 2}, {2}), b = param({3, 4}, {2});
  Tensor y = sum(add(a, b));
  {
    NoGradGuard no_grad;
    a.fill_(5);
  }
  y.backward();
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{1, 1}));
  EXPECT_EQ(b.grad().to_vector<double>(), (std::vector<double>{1, 1}));

  Tensor z = sum(mul(a, b));
  {
    NoGradGuard no_grad;
    b.fill_(6);
  }
  testing::expect_error_containing([&] { z.backward(); },
                                   "mul: argument 'b': expected the values its backward reads");
  EXPECT_EQ(a.grad().to_vector<double>(), (std::vector<double>{1, 1}));
}

// exp's backward reads its result (d exp(x) = exp(x) dx): one mul, no second exp; a write into
// that result before the backward is refused under the name "result".
TEST(Autograd, ExpReadsItsResultAndAWriteIntoItIsRefused) {
  Tensor x = param({0, 1, -2}, {3});
  Tensor e = exp(x);
  std::vector<std::string> ran;
  {
    OpObserverScope observe([&](const OpDef& op, auto&&...) { ran.push_back(op.name); });
    e.backward(Tensor::ones({3}, DType::f64), /*retain_graph=*/true);
  }
  EXPECT_EQ(ran, std::vector<std::string>{"mul"});
  EXPECT_EQ(x.grad().to_vector<double>(), e.to_vector<double>());
  {
    NoGradGuard no_grad;
    e.add_(Tensor::ones({3}, DType::f64));
  }
  testing::expect_error_containing([&] { e.backward(Tensor::ones({3}, DType::f64)); },
                                   "exp: argument 'result'");
}

// A node's saved tensors go as soon as its rule has run: by the time scale's rule runs (after
// mul's), the q that only mul kept is freed; with retain_graph it is still there.
TEST(Autograd, SavedTensorsAreReleasedRightAfterTheirNodesRuleUnlessRetained) {
  for (bool retain : {false, true}) {
    Tensor x = param({1, 2}, {2}), w = param({3, 4}, {2});
    Tensor q = scale(x, 2.0);  // scale keeps nothing
    Tensor loss = sum(mul(q, w));
    std::weak_ptr<Storage> q_storage = q.impl()->storage;
    q = Tensor();
    bool freed_before_scale = false;
    {
      OpObserverScope observe([&](const OpDef& op, auto&&...) {
        if (op.name == "scale") freed_before_scale = q_storage.expired();
      });
      loss.backward(Tensor(), retain);
    }
    EXPECT_EQ(freed_before_scale, !retain) << "retain_graph = " << retain;
    EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{6, 8}));
    if (retain) {
      loss.backward();  // the retained graph runs again, then is released
      EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{12, 16}));
      EXPECT_TRUE(q_storage.expired());
    }
    testing::expect_error_containing([&] { loss.backward(); },
                                     "a graph released by an earlier backward (at op 'sum')");
  }
  // What every node kept is gone after a pass: inputs, results and kernel-saved tensors.
  Tensor x = param({1, 2}, {2}), w = param({3, 4}, {2});
  Tensor loss = sum(exp(mul(x, w)));
  loss.backward();
  for (const Node* node : graph_nodes(loss)) {
    EXPECT_TRUE(node->released) << node->op->name;
    EXPECT_FALSE(node->result.tensor.defined()) << node->op->name;
    EXPECT_TRUE(node->kernel_saved.empty()) << node->op->name;
    for (std::size_t i = 0; i < node->inputs.size(); ++i) {
      EXPECT_FALSE(node->inputs[i].saved().tensor.defined()) << node->op->name << " " << i;
    }
  }
}

// A rule's gradient must have its input's shape and dtype: another is an error naming both.
TEST(Autograd, ARuleGradientOfAnotherDtypeIsRefused) {
  OpDef def;
  def.name = "test_gradient_in_f32";
  def.inputs = {"x"};
  def.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  def.kernels = device_kernels([](const KernelContext& ctx) { ctx.out.copy_(ctx.inputs[0]); });
  def.backward = [](const BackwardContext& ctx) {
    return std::vector<Tensor>{ctx.grad_out.to(DType::f32)};
  };
  const OpDef& op = OpRegistry::instance().add(std::move(def));
  Tensor x = param({2, 3}, {2});
  testing::expect_error_containing(
      [&] { sum(apply_op(op, {x})).backward(); },
      "backward rule gradient for 'x'': expected shape [2] and dtype f64, got shape [2] and "
      "dtype f32");
  EXPECT_FALSE(x.grad().defined());
}

// An op names what its backward reads when it is registered; a rule that reads anything else
// gets an error saying what to declare.
TEST(Autograd, BackwardReadsAreCheckedAtRegistrationAndWhenARuleReads) {
  auto identity = [](std::string name, std::vector<std::string> reads, bool reads_input) {
    OpDef def;
    def.name = std::move(name);
    def.inputs = {"x"};
    def.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
      return OutputSpec{in[0].shape(), in[0].dtype()};
    };
    def.kernels = device_kernels([](const KernelContext& ctx) { ctx.out.copy_(ctx.inputs[0]); });
    def.backward = [reads_input](const BackwardContext& ctx) {
      return std::vector<Tensor>{reads_input ? mul(ctx.grad_out, div(ctx.input(0), ctx.input(0)))
                                             : mul(ctx.grad_out, div(ctx.result(), ctx.result()))};
    };
    def.backward_reads = std::move(reads);
    return def;
  };
  auto& registry = OpRegistry::instance();
  testing::expect_error_containing(
      [&] { registry.add(identity("test_reads_unknown", {"y"}, true)); },
      "register_op: argument 'test_reads_unknown.backward_reads': expected names of the op's "
      "inputs (x) or \"result\", got 'y'");
  OpDef no_rule = identity("test_reads_without_rule", {"x"}, true);
  no_rule.backward = nullptr;
  testing::expect_error_containing([&] { registry.add(no_rule); },
                                   "names only for an op with a backward rule");
  EXPECT_EQ(registry.find("test_reads_unknown"), nullptr);

  const OpDef& undeclared = registry.add(identity("test_reads_undeclared", {}, true));
  const OpDef& result_only = registry.add(identity("test_reads_result_only", {"result"}, true));
  const OpDef& declared = registry.add(identity("test_reads_declared", {"x", "result"}, false));
  EXPECT_EQ(declared.backward_read_set.inputs, 1U);
  EXPECT_TRUE(declared.backward_read_set.result);
  Tensor x = param({2, 3}, {2});
  for (const OpDef* op : {&undeclared, &result_only}) {
    testing::expect_error_containing(
        [&] { sum(apply_op(*op, {x})).backward(); },
        "a read of input 'x', which it does not name (add it to backward_reads)");
  }
  EXPECT_FALSE(x.grad().defined());
  sum(apply_op(declared, {x})).backward();
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{1, 1}));
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
