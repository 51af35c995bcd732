// linear_cross_entropy against the unfused path, beyond the op harness's cases: the loss and
// both gradients against plain f64 loops and against minigraph's own ops composed with
// autograd; the same results for any chunk size; nothing saved without grad; memory far
// below the [N, V] logits at ANDREA's sizes; retain_graph; a bad target records nothing.
//   N rows, D width, V vocabulary; x [N, D] (or [B, T, D]), w [D, V], targets [N]
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <vector>

#include "expect_error.h"
#include "minigraph/cpu.h"
#include "minigraph/minigraph.h"
#include "minigraph/threads.h"

namespace mg {
namespace {

using Options = LinearCrossEntropyOptions;

struct Problem {
  Tensor x, w, targets;
};

// x ~ N(0, 1) and w ~ N(0, 1) (f64 unless told), targets with repeats and `ignored` rows
// (every third row from the first, until that many) set to ignore_index.
Problem make_problem(const Shape& x_shape, std::int64_t vocab, std::int64_t ignored,
                     DType dtype = DType::f64) {
  const std::int64_t width = x_shape.back();
  Problem p;
  p.x = Tensor::normal(x_shape, 0, 1, 11, dtype);
  p.w = Tensor::normal({width, vocab}, 0, 0.5, 12, dtype);
  const Shape t_shape(x_shape.begin(), x_shape.end() - 1);
  const std::int64_t n = shape_numel(t_shape);
  std::vector<std::int64_t> ids(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) ids[i] = (i * 7 + 3) % std::max<std::int64_t>(1, vocab / 2);
  for (std::int64_t i = 0, k = 0; i < n && k < ignored; i += 3, ++k) ids[i] = kDefaultIgnoreIndex;
  p.targets = Tensor::from_vector(ids, t_shape);
  p.x.set_requires_grad(true);
  p.w.set_requires_grad(true);
  return p;
}

struct Result {
  double loss;
  std::vector<double> dx, dw;
};

// The unfused path in plain f64 loops: all logits, a max-shifted log-softmax, then the
// analytic gradient (softmax - onehot) / count, pushed through the product by hand.
Result unfused_loops(const Problem& p, Reduction reduction) {
  const std::int64_t width = p.w.size(0), vocab = p.w.size(1), n = p.targets.numel();
  const std::vector<double> x = p.x.to_f64_vector(), w = p.w.to_f64_vector();
  const std::vector<double> t = p.targets.to_f64_vector();
  std::vector<double> dlogits(n * vocab, 0.0);
  double loss = 0;
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) count += t[i] != kDefaultIgnoreIndex;
  const double scale = reduction == Reduction::mean ? 1.0 / static_cast<double>(count) : 1.0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (t[i] == kDefaultIgnoreIndex) continue;
    std::vector<double> logits(vocab, 0.0);
    for (std::int64_t v = 0; v < vocab; ++v) {
      for (std::int64_t d = 0; d < width; ++d) logits[v] += x[i * width + d] * w[d * vocab + v];
    }
    const double top = *std::max_element(logits.begin(), logits.end());
    double total = 0;
    for (double l : logits) total += std::exp(l - top);
    const double lse = top + std::log(total);
    const auto target = static_cast<std::int64_t>(t[i]);
    loss += lse - logits[target];
    for (std::int64_t v = 0; v < vocab; ++v) {
      dlogits[i * vocab + v] = (std::exp(logits[v] - lse) - (v == target ? 1.0 : 0.0)) * scale;
    }
  }
  Result r{loss * scale, std::vector<double>(n * width, 0.0), std::vector<double>(width * vocab)};
  for (std::int64_t i = 0; i < n; ++i) {
    for (std::int64_t d = 0; d < width; ++d) {
      for (std::int64_t v = 0; v < vocab; ++v) {
        r.dx[i * width + d] += dlogits[i * vocab + v] * w[d * vocab + v];
        r.dw[d * vocab + v] += x[i * width + d] * dlogits[i * vocab + v];
      }
    }
  }
  return r;
}

// The unfused path in minigraph ops with autograd: logits = matmul(x, w); loss per row =
// log(sum(exp(logits - m))) + m - sum(logits * onehot), m a constant row max (the shift does
// not change the value or the gradient); ignored rows masked out; then mean or sum.
Result unfused_ops(const Problem& p, Reduction reduction) {
  const std::int64_t width = p.w.size(0), vocab = p.w.size(1), n = p.targets.numel();
  Tensor x = p.x.detach().clone().view({n, width}).set_requires_grad(true);
  Tensor w = p.w.detach().clone().set_requires_grad(true);
  const std::vector<double> t = p.targets.to_f64_vector();
  std::vector<double> onehot(n * vocab, 0.0), mask(n, 0.0);
  std::int64_t count = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    if (t[i] == kDefaultIgnoreIndex) continue;
    onehot[i * vocab + static_cast<std::int64_t>(t[i])] = 1;
    mask[i] = 1;
    ++count;
  }
  Tensor logits = matmul(x, w);  // [N, V]
  std::vector<double> top(n);
  {
    const std::vector<double> l = logits.to_f64_vector();
    for (std::int64_t i = 0; i < n; ++i) {
      top[i] = *std::max_element(l.begin() + i * vocab, l.begin() + (i + 1) * vocab);
    }
  }
  Tensor m = Tensor::from_vector(top, {n, 1});
  Tensor lse = add(log(sum(exp(sub(logits, m)), {1}, true)), m);                         // [N, 1]
  Tensor picked = sum(mul(logits, Tensor::from_vector(onehot, {n, vocab})), {1}, true);  // [N, 1]
  Tensor rows = mul(sub(lse, picked), Tensor::from_vector(mask, {n, 1}));
  Tensor loss = sum(rows);
  if (reduction == Reduction::mean) loss = scale(loss, 1.0 / static_cast<double>(count));
  loss.backward();
  return {loss.item(), x.grad().to_f64_vector(), w.grad().to_f64_vector()};
}

Result fused(const Problem& p, Options options) {
  Tensor x = p.x, w = p.w;  // handles sharing the problem's tensors
  x.zero_grad();
  w.zero_grad();
  Tensor loss = linear_cross_entropy(p.x, p.w, p.targets, options);
  loss.backward();
  return {loss.item(), p.x.grad().to_f64_vector(), p.w.grad().to_f64_vector()};
}

// max |a - b| over max |b|: the error relative to the gradient's scale.
double relative_error(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double diff = 0, scale = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) {
    diff = std::max(diff, std::abs(a[i] - b[i]));
    scale = std::max(scale, std::abs(b[i]));
  }
  return scale > 0 ? diff / scale : diff;
}

void expect_close(const Result& actual, const Result& expected, double tolerance) {
  EXPECT_LE(std::abs(actual.loss - expected.loss), tolerance * std::abs(expected.loss))
      << actual.loss << " vs " << expected.loss;
  EXPECT_LE(relative_error(actual.dx, expected.dx), tolerance);
  EXPECT_LE(relative_error(actual.dw, expected.dw), tolerance);
}

TEST(LinearCrossEntropy, EqualsTheUnfusedPathInF64) {
  for (Reduction reduction : {Reduction::mean, Reduction::sum}) {
    // 23 rows of V = 37 doubles: chunk_bytes 1000 gives chunks of 3 rows, the last of 2.
    const Problem p = make_problem({23, 9}, 37, 5);
    const Result loops = unfused_loops(p, reduction);
    const Result ops = unfused_ops(p, reduction);
    const Result fast = fused(p, {reduction, kDefaultIgnoreIndex, 1000});
    expect_close(fast, loops, 1e-10);
    expect_close(fast, ops, 1e-10);
    expect_close(ops, loops, 1e-10);  // the two references agree with each other too
    // The ignored rows (0, 3, ..., 12) get exactly zero gradient.
    for (std::int64_t d = 0; d < 9; ++d) EXPECT_EQ(fast.dx[3 * 9 + d], 0.0);
  }
}

TEST(LinearCrossEntropy, ThreeDimensionalInputEqualsTheUnfusedPath) {
  const Problem p = make_problem({2, 5, 6}, 13, 2);
  const Result fast = fused(p, {Reduction::mean, kDefaultIgnoreIndex, 200});
  expect_close(fast, unfused_loops(p, Reduction::mean), 1e-10);
  EXPECT_EQ(p.x.grad().shape(), (Shape{2, 5, 6}));
  EXPECT_EQ(p.w.grad().shape(), (Shape{6, 13}));
}

// Rows per chunk 1, 3 and all (V = 37 doubles = 296 bytes a row): the loss adds the rows in
// row order whatever the chunking; the GEMMs see other shapes, so bits may differ there.
TEST(LinearCrossEntropy, ChunkSizeDoesNotChangeTheResult) {
  const Problem p = make_problem({23, 9}, 37, 4);
  const Result one = fused(p, {Reduction::mean, kDefaultIgnoreIndex, 1});
  const Result three = fused(p, {Reduction::mean, kDefaultIgnoreIndex, 3 * 296});
  const Result all = fused(p, {Reduction::mean, kDefaultIgnoreIndex, 1 << 20});
  expect_close(one, all, 1e-12);
  expect_close(three, all, 1e-12);
  std::printf(
      "f64, chunks of 1 / 3 rows vs all 23: loss %s / %s, dx %s / %s (max rel %.1e), "
      "dw %s / %s (max rel %.1e)\n",
      one.loss == all.loss ? "identical" : "differs",
      three.loss == all.loss ? "identical" : "differs", one.dx == all.dx ? "identical" : "differs",
      three.dx == all.dx ? "identical" : "differs",
      std::max(relative_error(one.dx, all.dx), relative_error(three.dx, all.dx)),
      one.dw == all.dw ? "identical" : "differs", three.dw == all.dw ? "identical" : "differs",
      std::max(relative_error(one.dw, all.dw), relative_error(three.dw, all.dw)));
}

TEST(LinearCrossEntropy, UpstreamGradientScalesTheSavedGradients) {
  Problem p = make_problem({6, 4}, 7, 1);
  const Result base = fused(p, {});
  p.x.zero_grad();
  p.w.zero_grad();
  scale(linear_cross_entropy(p.x, p.w, p.targets), -2.5).backward();
  std::vector<double> dx = base.dx, dw = base.dw;
  for (double& v : dx) v *= -2.5;
  for (double& v : dw) v *= -2.5;
  EXPECT_LE(relative_error(p.x.grad().to_f64_vector(), dx), 1e-15);
  EXPECT_LE(relative_error(p.w.grad().to_f64_vector(), dw), 1e-15);
}

TEST(LinearCrossEntropy, OnlyTheInputsThatNeedGradGetOne) {
  Problem p = make_problem({6, 4}, 7, 1);
  const Result expected = unfused_loops(p, Reduction::mean);
  p.w = p.w.detach();
  linear_cross_entropy(p.x, p.w, p.targets).backward();
  EXPECT_LE(relative_error(p.x.grad().to_f64_vector(), expected.dx), 1e-10);
  EXPECT_FALSE(p.w.grad().defined());
}

TEST(LinearCrossEntropy, NoGradForwardSavesNothingAndGivesTheSameLoss) {
  // dw alone is 1000 x 64 doubles = 512 KB; a chunk of 8 rows is 64 KB.
  const Problem p = make_problem({64, 64}, 1000, 3);
  const Options options{Reduction::mean, kDefaultIgnoreIndex, 8 * 1000 * 8};
  const double with_grad = linear_cross_entropy(p.x, p.w, p.targets, options).item();
  cpu::reset_peak_memory_stats();
  const std::size_t before = cpu::memory_stats().in_use_bytes;
  Tensor loss;
  {
    NoGradGuard no_grad;
    loss = linear_cross_entropy(p.x, p.w, p.targets, options);
  }
  const std::size_t peak = cpu::memory_stats().peak_in_use_bytes - before;
  EXPECT_EQ(loss.item(), with_grad);
  EXPECT_FALSE(loss.requires_grad());
  EXPECT_EQ(loss.grad_fn(), nullptr);
  EXPECT_LT(peak, std::size_t{200} << 10) << "a no-grad forward allocated the gradients";
}

TEST(LinearCrossEntropy, RetainGraphBackwardTwiceGivesTheSameGradients) {
  Problem p = make_problem({10, 5}, 11, 2);
  Tensor loss = linear_cross_entropy(p.x, p.w, p.targets, {Reduction::sum, -100, 200});
  loss.backward(Tensor(), /*retain_graph=*/true);
  const std::vector<double> dx = p.x.grad().to_f64_vector(), dw = p.w.grad().to_f64_vector();
  p.x.zero_grad();
  p.w.zero_grad();
  loss.backward();
  EXPECT_EQ(p.x.grad().to_f64_vector(), dx);
  EXPECT_EQ(p.w.grad().to_f64_vector(), dw);
  expect_close({loss.item(), dx, dw}, unfused_loops(p, Reduction::sum), 1e-10);
}

// A loss's backward() seeds 1: the saved gradients are handed on with no op over them (a
// full-size pass over dx and dw), and a retained graph still gets copies, so a write into
// the gradients (clipping scales them in place) cannot reach what a second backward reads.
TEST(LinearCrossEntropy, AnUpstreamOneRunsNoOpAndARetainedGraphKeepsItsOwnCopy) {
  Problem p = make_problem({10, 5}, 11, 2);
  const Result expected = unfused_loops(p, Reduction::mean);
  Tensor loss = linear_cross_entropy(p.x, p.w, p.targets, {Reduction::mean, -100, 200});
  std::vector<std::string> ran;
  {
    OpObserverScope observe([&](const OpDef& op, auto&&...) { ran.push_back(op.name); });
    loss.backward(Tensor(), /*retain_graph=*/true);
  }
  EXPECT_EQ(ran, std::vector<std::string>{}) << "ops run by the backward: " << ran.size();
  expect_close({loss.item(), p.x.grad().to_f64_vector(), p.w.grad().to_f64_vector()}, expected,
               1e-10);
  const std::vector<double> dw = p.w.grad().to_f64_vector();
  {
    NoGradGuard no_grad;
    p.x.grad().fill_(7);
    p.w.grad().fill_(7);
  }
  p.x.zero_grad();
  p.w.zero_grad();
  loss.backward();
  EXPECT_EQ(p.w.grad().to_f64_vector(), dw);
  EXPECT_TRUE(loss.grad_fn()->kernel_saved.empty()) << "dx and dw outlive the backward";
}

TEST(LinearCrossEntropy, BadTargetThrowsAndRecordsNothing) {
  Problem p = make_problem({2, 3, 4}, 6, 0);
  p.targets.set_flat(4, 6);  // position [1, 1]
  const std::size_t before = cpu::memory_stats().in_use_bytes;
  testing::expect_error_containing([&] { linear_cross_entropy(p.x, p.w, p.targets); },
                                   "got 6 at position [1, 1]");
  p.targets.set_flat(4, -3);
  testing::expect_error_containing([&] { linear_cross_entropy(p.x, p.w, p.targets); },
                                   "got -3 at position [1, 1]");
  EXPECT_EQ(cpu::memory_stats().in_use_bytes, before);  // no saved gradient left behind
  EXPECT_FALSE(p.x.grad().defined());
  EXPECT_FALSE(p.w.grad().defined());
}

TEST(LinearCrossEntropy, ReductionNoneIsRefusedWithAWayOut) {
  const Problem p = make_problem({3, 2}, 4, 0);
  testing::expect_error_containing(
      [&] { linear_cross_entropy(p.x, p.w, p.targets, {Reduction::none}); },
      "use matmul + cross_entropy");
}

// ANDREA's output head in f32: N = B*T = 8192 rows, D = 768, V = 8449. The logits alone
// would be 277 MB; forward and backward must stay within the inputs, the saved and final
// gradients, two chunk buffers and some slack. Prints the time (not asserted).
TEST(LinearCrossEntropy, AndreaSizesStayFarBelowTheLogits) {
  const std::int64_t n = 8192, width = 768, vocab = 8449;
  const std::size_t f32 = sizeof(float);
  const std::size_t logits_bytes = n * vocab * f32;
  const std::size_t chunk_bytes = std::size_t{16} << 20;
  Problem p = make_problem({n, width}, vocab, 100, DType::f32);
  cpu::reset_peak_memory_stats();
  const std::size_t before = cpu::memory_stats().in_use_bytes;
  const auto start = std::chrono::steady_clock::now();
  Tensor loss = linear_cross_entropy(
      p.x, p.w, p.targets,
      {Reduction::mean, kDefaultIgnoreIndex, static_cast<std::int64_t>(chunk_bytes)});
  loss.backward();
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  const std::size_t peak = cpu::memory_stats().peak_in_use_bytes - before;
  const std::size_t grads = (n * width + width * vocab) * f32;  // dx and dw, once
  const std::size_t bound = 2 * grads + 2 * chunk_bytes + (std::size_t{8} << 20);
  std::printf(
      "f32 N=%lld D=%lld V=%lld forward+backward: %.3f s on %d threads, peak %.1f MB "
      "beyond the inputs (bound %.1f MB, logits alone %.1f MB), loss %.6f\n",
      static_cast<long long>(n), static_cast<long long>(width), static_cast<long long>(vocab),
      seconds, num_threads(), peak / 1e6, bound / 1e6, logits_bytes / 1e6, loss.item());
  EXPECT_LE(peak, bound);
  EXPECT_LT(peak, logits_bytes);
  EXPECT_TRUE(std::isfinite(loss.item()));
  // Random logits of scale ~ sqrt(D) * 0.5: the loss is a few nats above log V, not NaN.
  EXPECT_GT(loss.item(), 0.0);
  EXPECT_TRUE(p.x.grad().defined() && p.w.grad().defined());
}

}  // namespace
}  // namespace mg
