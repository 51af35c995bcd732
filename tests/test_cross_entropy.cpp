// cross_entropy against values a human can check: log(V) for uniform logits, a 2x3 example
// computed by hand (Python's math module), the mean over rows not ignored, NaN for a mean over
// no row, finite losses for huge logits, and errors that leave nothing behind. The op harness
// checks the rest (every case against the naive reference, gradients against finite
// differences).
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "minigraph/ops/cross_entropy/cross_entropy.h"
#include "minigraph/ops/cross_entropy_backward/cross_entropy_backward.h"

namespace mg {
namespace {

constexpr std::int64_t kIgnore = kDefaultIgnoreIndex;

Tensor ids(const std::vector<std::int64_t>& values, const Shape& shape) {
  return Tensor::from_vector(values, shape);
}

// The 2x3 example: rows [1, 2, 3] (target 2) and [0.5, -1, 2.5] (target 0).
Tensor example_logits(DType dtype) {
  return Tensor::from_vector(std::vector<double>{1.0, 2.0, 3.0, 0.5, -1.0, 2.5}, {2, 3}).to(dtype);
}
// math.log(sum(math.exp(v) for v in row)) - row[target] for each row.
constexpr double kExampleLoss0 = 0.40760596444438013;
constexpr double kExampleLoss1 = 2.1531782071222882;

TEST(CrossEntropy, UniformLogitsGiveLogV) {
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor logits = Tensor::full({4, 7}, 0.25, dtype);
    Tensor loss = cross_entropy(logits, ids({0, 6, 3, 3}, {4}));
    EXPECT_NEAR(loss.item(), 1.9459101490553132, dtype == DType::f32 ? 1e-6 : 1e-14);  // log 7
  }
}

TEST(CrossEntropy, MatchesAHandComputedExample) {
  const Tensor targets = ids({2, 0}, {2});
  Tensor none = cross_entropy(example_logits(DType::f64), targets, {Reduction::none});
  ASSERT_EQ(none.shape(), (Shape{2}));
  EXPECT_NEAR(none.to_vector<double>()[0], kExampleLoss0, 1e-14);
  EXPECT_NEAR(none.to_vector<double>()[1], kExampleLoss1, 1e-14);
  EXPECT_NEAR(cross_entropy(example_logits(DType::f64), targets, {Reduction::sum}).item(),
              2.5607841715666684, 1e-14);
  Tensor mean = cross_entropy(example_logits(DType::f64), targets);
  EXPECT_EQ(mean.shape(), Shape{});
  EXPECT_NEAR(mean.item(), 1.2803920857833342, 1e-14);
  EXPECT_NEAR(cross_entropy(example_logits(DType::f32), targets).item(), 1.2803920857833342, 1e-6);
}

TEST(CrossEntropy, GradientOfTheMeanIsSoftmaxMinusOneHotOverRows) {
  Tensor logits = example_logits(DType::f64).set_requires_grad();
  cross_entropy(logits, ids({2, 0}, {2})).backward();
  // (math.exp(v) / sum(math.exp(u) for u in row) - onehot) / 2
  const std::vector<double> expected = {0.04501528658519023,  0.12236423552739883,
                                        -0.16737952211258905, -0.4419427326629294,
                                        0.012954327358700765, 0.42898840530422866};
  const auto grad = logits.grad().to_vector<double>();
  ASSERT_EQ(grad.size(), expected.size());
  for (std::size_t i = 0; i < grad.size(); ++i) EXPECT_NEAR(grad[i], expected[i], 1e-14) << i;
}

TEST(CrossEntropy, MeanSkipsIgnoredRowsAndEqualsSumOverCounted) {
  Tensor logits = Tensor::normal({3, 5, 6}, 0, 2, 11, DType::f64);
  Tensor targets =
      ids({1, kIgnore, 5, 0, 0, kIgnore, 3, 2, kIgnore, 4, 1, 1, kIgnore, 5, 2}, {3, 5});
  const double sum = cross_entropy(logits, targets, {Reduction::sum}).item();
  const double mean = cross_entropy(logits, targets).item();
  EXPECT_NEAR(mean, sum / 11, 1e-12);  // 15 rows, 4 ignored
  const auto rows = cross_entropy(logits, targets, {Reduction::none}).to_vector<double>();
  double total = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (i == 1 || i == 5 || i == 8 || i == 12)
      EXPECT_EQ(rows[i], 0.0) << i;  // ignored
    else
      EXPECT_GT(rows[i], 0.0) << i;
    total += rows[i];
  }
  EXPECT_NEAR(total, sum, 1e-12);
}

TEST(CrossEntropy, AllRowsIgnoredGiveNanMeanZeroSumAndZeroGradient) {
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor logits = Tensor::normal({2, 3}, 0, 1, 5, dtype).set_requires_grad();
    Tensor targets = ids({kIgnore, kIgnore}, {2});
    Tensor mean = cross_entropy(logits, targets);
    EXPECT_TRUE(std::isnan(mean.item()));
    EXPECT_EQ(cross_entropy(logits, targets, {Reduction::sum}).item(), 0.0);
    mean.backward();
    for (double g : logits.grad().to_f64_vector()) EXPECT_EQ(g, 0.0);
  }
}

TEST(CrossEntropy, CustomIgnoreIndexInsideTheClassRange) {
  Tensor logits = example_logits(DType::f64);
  // ignore_index 0 skips the second row: the mean is the first row's loss alone.
  EXPECT_NEAR(cross_entropy(logits, ids({2, 0}, {2}), {Reduction::mean, 0}).item(), kExampleLoss0,
              1e-14);
}

TEST(CrossEntropy, HugeLogitsGiveFiniteLosses) {
  // exp(1e4) overflows in f32 and f64 alike; exp(x - max) does not.
  Tensor logits =
      Tensor::from_vector(std::vector<double>{1e4, 1e4 - 1, -1e4, -2e4, 2e4, 2e4}, {2, 3})
          .to(DType::f32)
          .set_requires_grad();
  Tensor loss = cross_entropy(logits, ids({1, 0}, {2}), {Reduction::none});
  const auto values = loss.to_f64_vector();
  // Row 0: log(1 + e) (and e^-2e4 vanishes); row 1: 4e4 + log 2.
  EXPECT_NEAR(values[0], std::log1p(std::exp(1.0)), 1e-5);
  EXPECT_NEAR(values[1], 4e4 + std::log(2.0), 1e-2);
  loss.backward(Tensor::ones({2}, DType::f32));
  for (double g : logits.grad().to_f64_vector()) EXPECT_TRUE(std::isfinite(g)) << g;
}

TEST(CrossEntropy, ABadTargetThrowsBeforeAnythingIsComputedOrRecorded) {
  Tensor logits = Tensor::normal({2, 3, 5}, 0, 1, 3, DType::f32).set_requires_grad();
  const auto before = logits.to_f64_vector();
  int ops_run = 0;
  {
    OpObserverScope observe(
        [&](const OpDef&, std::span<const Tensor>, const std::any&, const Tensor&) { ++ops_run; });
    const Error e = testing::expect_error([&] {
      cross_entropy(logits, ids({0, 1, 2, 3, 4, 9}, {2, 3}));
    });
    EXPECT_EQ(e.op(), "cross_entropy");
    EXPECT_EQ(e.argument(), "targets");
    EXPECT_EQ(e.expected(), "ids in [0, 5) or ignore_index -100");
    EXPECT_EQ(e.actual(), "9 at position [1, 2]");
    testing::expect_error_containing(
        [&] {
          cross_entropy(logits, ids({0, 1, 2, -1, 4, 0}, {2, 3}), {Reduction::sum, 4});
        },
        "got -1 at position [1, 0]");
  }
  EXPECT_EQ(ops_run, 0);
  EXPECT_EQ(logits.to_f64_vector(), before);
  EXPECT_FALSE(logits.grad().defined());
}

TEST(CrossEntropy, BackwardOpScalesRowsByTheirUpstreamGradient) {
  Tensor logits = example_logits(DType::f64);
  Tensor grad = Tensor::from_vector(std::vector<double>{2.0, -3.0}, {2});
  const auto d = cross_entropy_backward(logits, ids({kIgnore, 1}, {2}), grad, {Reduction::none})
                     .to_vector<double>();
  // Row 0 ignored: zero. Row 1: -3 (softmax - onehot(1)).
  const double s = std::exp(0.5) + std::exp(-1.0) + std::exp(2.5);
  const std::vector<double> expected = {
      0, 0, 0, -3 * std::exp(0.5) / s, -3 * (std::exp(-1.0) / s - 1), -3 * std::exp(2.5) / s};
  for (std::size_t i = 0; i < d.size(); ++i) EXPECT_NEAR(d[i], expected[i], 1e-14) << i;
}

}  // namespace
}  // namespace mg
