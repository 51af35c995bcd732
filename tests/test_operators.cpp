// Tensor's operators and op methods are the ops themselves (the same values, bit for bit, and
// the same gradients), and the in-place add_ / mul_ write through the unrecorded path.
#include <gtest/gtest.h>

#include "expect_error.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

using testing::expect_error_containing;

Tensor values(std::vector<double> v, Shape shape) { return Tensor::from_vector(v, shape); }

TEST(Operators, AreTheOpsBitForBit) {
  Tensor a = Tensor::normal({3, 4}, 0, 1, 1, DType::f32);
  Tensor b = Tensor::normal({4}, 0, 1, 2, DType::f32);
  Tensor w = Tensor::normal({4, 2}, 0, 1, 3, DType::f32);
  auto same = [](const Tensor& x, const Tensor& y) {
    return x.shape() == y.shape() && x.to_vector<float>() == y.to_vector<float>();
  };
  EXPECT_TRUE(same(a + b, add(a, b)));
  EXPECT_TRUE(same(a - b, sub(a, b)));
  EXPECT_TRUE(same(a * b, mul(a, b)));
  EXPECT_TRUE(same(a / b, div(a, b)));
  EXPECT_TRUE(same(-a, neg(a)));
  EXPECT_TRUE(same(a * 2.5, scale(a, 2.5)));
  EXPECT_TRUE(same(2.5 * a, scale(a, 2.5)));
  EXPECT_TRUE(same(a.matmul(w), matmul(a, w)));
  EXPECT_TRUE(same(a.sum(), sum(a)));
  EXPECT_TRUE(same(a.sum({1}, true), sum(a, {1}, true)));
  EXPECT_TRUE(same(a.mean(), mean(a)));
  EXPECT_TRUE(same(a.mean({0}), mean(a, {0})));
  EXPECT_TRUE(same(a.exp(), exp(a)));
  EXPECT_TRUE(same(a.exp().log(), log(exp(a))));
  EXPECT_EQ((a - a).sum().item(), 0.0);
  EXPECT_EQ(values({1, 2, 3}, {3}).sum().item(), 6.0);
  EXPECT_EQ(values({1, 2, 3}, {3}).mean().item(), 2.0);
}

// A loss written with operators: mean((x W - y)^2), its gradient against finite differences.
TEST(Operators, ScalarArithmeticAndActivationMethodsAreTheOps) {
  Tensor a = Tensor::normal({3, 4}, 0, 1, 4, DType::f32);
  auto same = [](const Tensor& x, const Tensor& y) {
    return x.shape() == y.shape() && x.to_vector<float>() == y.to_vector<float>();
  };
  EXPECT_TRUE(same(a + 1, add(a, 1.0)));
  EXPECT_TRUE(same(1 + a, add(a, 1.0)));
  EXPECT_TRUE(same(a - 1, add(a, -1.0)));
  EXPECT_TRUE(same(1 - a, rsub(a, 1.0)));
  EXPECT_TRUE(same(a / 2, div(a, 2.0)));
  EXPECT_TRUE(same(a * 3, mul(a, 3.0)));
  EXPECT_TRUE(same(a.neg(), neg(a)));
  EXPECT_TRUE(same(a.relu(), relu(a)));
  EXPECT_TRUE(same(a.tanh(), tanh(a)));
  EXPECT_TRUE(same(a.sigmoid(), sigmoid(a)));
  EXPECT_TRUE(same(a.square(), square(a)));
  EXPECT_TRUE(same(a.square().sqrt(), sqrt(square(a))));
  EXPECT_TRUE(same(a.square().rsqrt(), rsqrt(square(a))));
  EXPECT_TRUE(same(a.pow(3), pow(a, 3)));
  // The values themselves, exactly where IEEE arithmetic is exact.
  const Tensor x = values({-2, 0, 0.5, 3}, {4});
  EXPECT_EQ((1 - x).to_vector<double>(), (std::vector<double>{3, 1, 0.5, -2}));
  EXPECT_EQ((x / 2 + 1).to_vector<double>(), (std::vector<double>{0, 1, 1.25, 2.5}));
  EXPECT_EQ(x.relu().to_vector<double>(), (std::vector<double>{0, 0, 0.5, 3}));
  EXPECT_EQ(x.square().to_vector<double>(), (std::vector<double>{4, 0, 0.25, 9}));
}

TEST(Operators, GeluTakesNoneOrTanhAndNamesAnythingElse) {
  const Tensor x = values({-1, 0, 1}, {3});
  // gelu(1) = Phi(1) = 0.8413447460685429; the tanh form 0.8411919906082768 (PyTorch's values).
  EXPECT_NEAR(gelu(x).to_vector<double>()[2], 0.8413447460685429, 1e-12);
  EXPECT_NEAR(gelu(x, "tanh").to_vector<double>()[2], 0.8411919906082768, 1e-12);
  EXPECT_EQ(gelu(x).to_vector<double>()[1], 0.0);
  expect_error_containing([&] { gelu(x, "erf"); },
                          "gelu: argument 'approximate': expected \"none\" or \"tanh\", got "
                          "\"erf\"");
  expect_error_containing([&] { gelu_backward(x, x, "Tanh"); }, "gelu_backward: argument");
}

TEST(Operators, ComposeIntoALossWhoseGradientIsRight) {
  Tensor x = Tensor::normal({5, 3}, 0, 1, 4, DType::f64);
  Tensor y = Tensor::normal({5, 2}, 0, 1, 5, DType::f64);
  Tensor w = Tensor::normal({3, 2}, 0, 1, 6, DType::f64).set_requires_grad(true);
  auto loss = [&](const std::vector<Tensor>& in) {
    Tensor diff = x.matmul(in[0]) - y;
    return (diff * diff).mean() * 0.5 + (-in[0]).exp().sum() / Tensor::full({}, 10.0, DType::f64);
  };
  auto report = gradcheck(loss, {w}, {"w"});
  EXPECT_TRUE(report.passed()) << report.str();
}

TEST(InPlace, AddAndMulWriteIntoTheTensorAndBumpItsVersion) {
  Tensor t = values({1, 2, 3, 4}, {2, 2});
  const void* memory = t.raw_data();
  const auto version = t.version();
  t.add_(values({10, 20}, {2}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{11, 22, 13, 24}));
  t.add_(values({1, 1, 1, 1}, {2, 2}), -0.5);  // t += -0.5 * x
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{10.5, 21.5, 12.5, 23.5}));
  t.mul_(values({2}, {1}));
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{21, 43, 25, 47}));
  EXPECT_EQ(t.raw_data(), memory);
  EXPECT_EQ(t.version(), version + 3);
  // The result must keep t's shape: x may broadcast to t, not t to x.
  const Error e = testing::expect_error([&] { t.mul_(Tensor::ones({3, 2, 2}, DType::f64)); });
  EXPECT_EQ(e.op(), "mul_");
  EXPECT_EQ(e.argument(), "x");
  EXPECT_NE(std::string(e.what()).find("broadcasts to self's [2, 2]"), std::string::npos);
  expect_error_containing([&] { t.add_(Tensor::ones({3}, DType::f64)); }, "got [3]");
  EXPECT_EQ(t.to_vector<double>(), (std::vector<double>{21, 43, 25, 47}));
}

// An SGD step as users write it: under NoGradGuard, p.add_(p.grad(), -lr); with grad mode on
// the same write on a parameter is refused, naming the method.
TEST(InPlace, AnSgdStepLowersTheLossAndIsRefusedWithGradModeOn) {
  Tensor x = Tensor::normal({8, 3}, 0, 1, 7, DType::f64);
  Tensor y = Tensor::normal({8, 1}, 0, 1, 8, DType::f64);
  Tensor w = Tensor::zeros({3, 1}, DType::f64).set_requires_grad(true);
  auto loss = [&] {
    Tensor diff = x.matmul(w) - y;
    return (diff * diff).mean();
  };
  const double before = loss().item();
  loss().backward();
  const Error e = testing::expect_error([&] { w.add_(w.grad(), -0.1); });
  EXPECT_EQ(e.op(), "add_");
  {
    NoGradGuard no_grad;
    w.add_(w.grad(), -0.1);
    w.zero_grad();
  }
  EXPECT_LT(loss().item(), before);
  EXPECT_TRUE(w.requires_grad());
}

}  // namespace
}  // namespace mg
