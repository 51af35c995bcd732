// The fused scaled_dot_product_attention against the same attention composed of separate ops,
// beyond the op harness's cases: f64 equality to 1e-10 of the output and of every input's
// gradient over head sizes and lengths, with q, k, v the non-contiguous heads of one [B, T, 3D]
// projection read without a copy; masks; f32 against f64; the same bits on any thread count;
// a peak memory far below the composed path's [B, H, T, T] probabilities.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <string>
#include <tuple>
#include <vector>

#include "minigraph/cpu.h"
#include "minigraph/minigraph.h"
#include "minigraph/threads.h"

namespace mg {
namespace {

struct AttentionSize {
  std::int64_t batch, heads, length, head_size;
};

// q, k, v [B, H, T, hd] as GPT-2 gets them: heads of one projection [B, T, 3 * H * hd], split
// and permuted (strides T*3D, hd, 3D, 1), so no head is contiguous.
struct Projection {
  Tensor qkv, query, key, value;
};

Projection split_heads(const Tensor& qkv, const AttentionSize& s) {
  const Tensor split = qkv.view({s.batch, s.length, 3, s.heads, s.head_size});
  return {qkv, split.select(2, 0).permute({0, 2, 1, 3}), split.select(2, 1).permute({0, 2, 1, 3}),
          split.select(2, 2).permute({0, 2, 1, 3})};
}

Tensor make_qkv(const AttentionSize& s, DType dtype) {
  return Tensor::normal({s.batch, s.length, 3 * s.heads * s.head_size}, 0, 1, 7, dtype)
      .set_requires_grad(true);
}

using AttentionFn = Tensor (*)(const Tensor&, const Tensor&, const Tensor&,
                               const AttentionOptions&);

struct Outcome {
  std::vector<double> out, grad;  // the output and the projection's gradient
};

// The output and d(sum(out * R))/d(qkv) for a fixed R ~ N(0, 1).
Outcome attend(AttentionFn fn, const AttentionSize& s, const AttentionOptions& options,
               const Tensor& qkv) {
  const Projection p = split_heads(qkv, s);
  const Tensor out = fn(p.query, p.key, p.value, options);
  sum(mul(out, Tensor::normal(out.shape(), 0, 1, 99, qkv.dtype()))).backward();
  return {out.to_f64_vector(), qkv.grad().to_f64_vector()};
}

Outcome attend(AttentionFn fn, const AttentionSize& s, const AttentionOptions& options,
               DType dtype = DType::f64) {
  return attend(fn, s, options, make_qkv(s, dtype));
}

double largest_gap(const std::vector<double>& a, const std::vector<double>& b) {
  EXPECT_EQ(a.size(), b.size());
  double most = 0;
  for (std::size_t i = 0; i < std::min(a.size(), b.size()); ++i) {
    const double d = std::abs(a[i] - b[i]);
    most = std::isnan(d) ? INFINITY : std::max(most, d);
  }
  return most;
}

void expect_fused_equals_composed(const AttentionSize& s, const AttentionOptions& options,
                                  double tolerance = 1e-10) {
  const Outcome fused = attend(scaled_dot_product_attention, s, options);
  const Outcome composed = attend(scaled_dot_product_attention_composed, s, options);
  EXPECT_LE(largest_gap(fused.out, composed.out), tolerance) << "forward";
  EXPECT_LE(largest_gap(fused.grad, composed.grad), tolerance) << "q, k, v gradients";
}

// causal, head size, length
class FusedAttention : public ::testing::TestWithParam<std::tuple<bool, int, int>> {};

TEST_P(FusedAttention, EqualsTheComposedPathInF64ForViewsOfOneProjection) {
  const auto [causal, head_size, length] = GetParam();
  // Two heads at the longest length keep the composed path's [B, H, T, T] small.
  const AttentionSize s{length > 100 ? 1 : 2, 2, length, head_size};
  expect_fused_equals_composed(s, {.is_causal = causal});
}

INSTANTIATE_TEST_SUITE_P(Sizes, FusedAttention,
                         ::testing::Combine(::testing::Bool(), ::testing::Values(1, 63, 64, 128),
                                            ::testing::Values(1, 17, 1024)),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param) ? "causal" : "full") + "_hd" +
                                  std::to_string(std::get<1>(info.param)) + "_T" +
                                  std::to_string(std::get<2>(info.param));
                         });

// A [T, T] pattern of which keys each query sees: about a third hidden; row `hidden_row`
// (negative: none) hides every key.
std::vector<double> key_pattern(std::int64_t length, std::int64_t hidden_row) {
  std::vector<double> sees(static_cast<std::size_t>(length * length));
  for (std::int64_t i = 0; i < length; ++i) {
    for (std::int64_t j = 0; j < length; ++j) sees[i * length + j] = (i * 5 + j * 3) % 3 != 0;
    if (i == hidden_row) std::fill_n(sees.begin() + i * length, length, 0.0);
  }
  return sees;
}

TEST(FusedAttentionMasks, BoolMasksEqualTheComposedPathAndAHiddenRowGivesZeros) {
  const AttentionSize s{2, 2, 150, 64};  // 150: more than one tile of queries and of keys
  const Tensor mask = Tensor::from_vector(key_pattern(s.length, 37), {s.length, s.length}) > 0.5;
  expect_fused_equals_composed(s, {.attn_mask = mask});
  const Outcome fused = attend(scaled_dot_product_attention, s, {.attn_mask = mask});
  for (std::int64_t d = 0; d < s.head_size; ++d) {
    EXPECT_EQ(fused.out[37 * s.head_size + d], 0.0) << "a query that sees no key gives zeros";
  }
}

TEST(FusedAttentionMasks, AdditiveMasksPerBatchEqualTheComposedPath) {
  const AttentionSize s{2, 2, 150, 32};
  std::vector<double> added(static_cast<std::size_t>(s.batch * s.length * s.length));
  const std::vector<double> sees = key_pattern(s.length, 5);
  for (std::size_t i = 0; i < added.size(); ++i) {
    const double sign = i < sees.size() ? 1.0 : -1.0;  // the batches differ
    added[i] =
        sees[i % sees.size()] != 0 ? sign * std::sin(0.01 * static_cast<double>(i)) : -INFINITY;
  }
  const Tensor mask = Tensor::from_vector(added, {s.batch, 1, s.length, s.length});
  expect_fused_equals_composed(s, {.attn_mask = mask});
}

TEST(FusedAttentionMasks, AGivenScaleEqualsTheComposedPath) {
  expect_fused_equals_composed({1, 3, 70, 16}, {.is_causal = true, .scale = 0.3});
}

TEST(FusedAttentionPrecision, F32StaysNearF64AtGpt2Sizes) {
  const AttentionSize s{1, 2, 1024, 64};
  const Tensor qkv = make_qkv(s, DType::f32);
  const Outcome f32 = attend(scaled_dot_product_attention, s, {.is_causal = true}, qkv);
  const Tensor same_in_f64 = qkv.detach().to(DType::f64).set_requires_grad(true);
  const Outcome f64 = attend(scaled_dot_product_attention, s, {.is_causal = true}, same_in_f64);
  EXPECT_LE(largest_gap(f32.out, f64.out), 1e-5);
  EXPECT_LE(largest_gap(f32.grad, f64.grad), 1e-4);
  EXPECT_GT(largest_gap(f32.out, f64.out), 0.0) << "the f32 run was not an f32 run";
}

TEST(FusedAttentionLayout, ViewsOfOneProjectionAreReadWithoutACopy) {
  const AttentionSize s{2, 3, 200, 64};
  const Projection p = split_heads(make_qkv(s, DType::f32).detach(), s);
  const AttentionOptions options{.is_causal = true};
  const std::uint64_t before = layout_copy_bytes();
  const Tensor out = scaled_dot_product_attention(p.query, p.key, p.value, options);
  EXPECT_EQ(layout_copy_bytes(), before) << "the forward copied its inputs";
  // An upstream gradient laid out as the heads are; the logsumexp's values do not matter here.
  const Tensor grad_out =
      Tensor::normal({s.batch, s.length, s.heads, s.head_size}, 0, 1, 3).permute({0, 2, 1, 3});
  const Tensor lse = Tensor::zeros({s.batch, s.heads, s.length});
  const std::uint64_t before_backward = layout_copy_bytes();
  scaled_dot_product_attention_backward(grad_out, p.query, p.key, p.value, out, lse, options);
  EXPECT_EQ(layout_copy_bytes(), before_backward) << "the backward copied its inputs";
}

TEST(FusedAttentionThreads, TheBitsDoNotDependOnTheThreadCount) {
  const int threads = num_threads();
  const AttentionSize s{2, 3, 300, 64};
  set_num_threads(1);
  const Outcome one = attend(scaled_dot_product_attention, s, {.is_causal = true}, DType::f32);
  set_num_threads(2);
  const Outcome two = attend(scaled_dot_product_attention, s, {.is_causal = true}, DType::f32);
  set_num_threads(5);
  const Outcome five = attend(scaled_dot_product_attention, s, {.is_causal = true}, DType::f32);
  set_num_threads(threads);
  EXPECT_EQ(one.out, two.out);
  EXPECT_EQ(one.grad, two.grad);
  EXPECT_EQ(one.out, five.out);
  EXPECT_EQ(one.grad, five.grad);
}

// The peak bytes in use above the start while `fn` runs a forward and backward in f32, on
// contiguous q, k, v (views' own gradients, a zero-filled projection each, are not attention's).
std::size_t peak_bytes(AttentionFn fn, const AttentionSize& s) {
  const Shape shape{s.batch, s.heads, s.length, s.head_size};
  Tensor q = Tensor::normal(shape, 0, 1, 1).set_requires_grad(true);
  Tensor k = Tensor::normal(shape, 0, 1, 2).set_requires_grad(true);
  Tensor v = Tensor::normal(shape, 0, 1, 3).set_requires_grad(true);
  const Tensor weights = Tensor::normal(shape, 0, 1, 5);
  cpu::reset_peak_memory_stats();
  const std::size_t start = cpu::memory_stats().in_use_bytes;
  sum(mul(fn(q, k, v, {.is_causal = true}), weights)).backward();
  return cpu::memory_stats().peak_in_use_bytes - start;
}

TEST(FusedAttentionMemory, PeakStaysFarBelowTheComposedPathsScores) {
  const AttentionSize s{1, 4, 1024, 32};
  const std::size_t scores = 4 * s.batch * s.heads * s.length * s.length;  // one [B, H, T, T]
  const std::size_t fused = peak_bytes(scaled_dot_product_attention, s);
  const std::size_t composed = peak_bytes(scaled_dot_product_attention_composed, s);
  EXPECT_GT(composed, 2 * scores) << "the composed path keeps scores and probabilities";
  EXPECT_LT(fused, scores / 2) << "the fused path held a [B, H, T, T] matrix";
}

}  // namespace
}  // namespace mg
