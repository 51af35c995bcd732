// The ops of a transformer block against values known from elsewhere (the kernels and their
// references share functors, so the harness alone cannot see a wrong constant): activations at
// known points and at the edges, bool tensors from comparisons, the causal mask through
// masked_fill and softmax, dropout's repeatable mask, cat and stack, bool tensors in
// safetensors files, and the streamed stores of large outputs.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <fstream>
#include <limits>

#include "expect_error.h"
#include "minigraph/minigraph.h"
#include "scratch_dir.h"

namespace mg {
namespace {

using testing::expect_error_containing;

Tensor mask_values(std::vector<double> v, Shape shape) { return Tensor::from_vector(v, shape); }
std::vector<double> mask_bits(const Tensor& mask) {
  EXPECT_EQ(mask.dtype(), DType::boolean);
  return mask.to_f64_vector();
}

// Values from Python's math (erf, tanh) at x = -3, -1, 0.5, 1, 2.
TEST(Activations, GeluMatchesBothOfPyTorchsFormsAtKnownPoints) {
  Tensor x = mask_values({-3, -1, 0.5, 1, 2}, {5}).to(DType::f64);
  const std::vector<double> exact = {-0.00404969409489031, -0.15865525393145707,
                                     0.34573123063700656, 0.8413447460685429, 1.9544997361036416};
  const std::vector<double> tanh_form = {-0.0036373920817729943, -0.15880800939172324,
                                         0.34571400982514394, 0.8411919906082768,
                                         1.954597694087775};
  const auto e = gelu(x, "none").to_f64_vector(), t = gelu(x, "tanh").to_f64_vector();
  for (std::size_t i = 0; i < exact.size(); ++i) {
    EXPECT_NEAR(e[i], exact[i], 1e-15) << "gelu(" << x.at_flat(i) << ")";
    EXPECT_NEAR(t[i], tanh_form[i], 1e-15) << "gelu(" << x.at_flat(i) << ", tanh)";
  }
}

// NaN propagates through every activation, as PyTorch's; infinities saturate.
TEST(Activations, NanPropagatesAndInfinitiesSaturateAsPyTorch) {
  const double nan = std::nan(""), inf = INFINITY;
  Tensor x = mask_values({nan, inf, -inf, -0.0}, {4});
  auto check = [](const Tensor& y, std::vector<double> want, const char* what) {
    const auto got = y.to_f64_vector();
    for (std::size_t i = 0; i < want.size(); ++i) {
      if (std::isnan(want[i])) {
        EXPECT_TRUE(std::isnan(got[i])) << what << " element " << i << ": " << got[i];
      } else {
        EXPECT_EQ(got[i], want[i]) << what << " element " << i;
      }
    }
  };
  check(relu(x), {nan, inf, 0, 0}, "relu");
  check(tanh(x), {nan, 1, -1, 0}, "tanh");
  check(sigmoid(x), {nan, 1, 0, 0.5}, "sigmoid");
  check(gelu(x, "none"), {nan, inf, nan, 0}, "gelu");
  check(gelu(x, "tanh"), {nan, inf, nan, 0}, "gelu tanh");
  check(sqrt(x), {nan, inf, nan, 0}, "sqrt");
}

TEST(Masks, ComparisonsGiveBoolMasksAsIeeeAndPyTorch) {
  const double nan = std::nan(""), inf = INFINITY;
  Tensor a = mask_values({1, 2, nan, -0.0, inf, -inf}, {6});
  Tensor b = mask_values({1, 3, nan, 0.0, inf, 0}, {6});
  EXPECT_EQ(mask_bits(a == b), (std::vector<double>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(mask_bits(a != b), (std::vector<double>{0, 1, 1, 0, 0, 1}));
  EXPECT_EQ(mask_bits(a < b), (std::vector<double>{0, 1, 0, 0, 0, 1}));
  EXPECT_EQ(mask_bits(a <= b), (std::vector<double>{1, 1, 0, 1, 1, 1}));
  EXPECT_EQ(mask_bits(a > b), (std::vector<double>{0, 0, 0, 0, 0, 0}));
  EXPECT_EQ(mask_bits(a >= b), (std::vector<double>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(mask_bits(a > 1.5), (std::vector<double>{0, 1, 0, 0, 1, 0}));
  EXPECT_EQ(mask_bits(a.ge(b)), mask_bits(a >= b));
  // Broadcast, and never recorded: a mask carries no gradient.
  Tensor x = Tensor::normal({3, 4}, 0, 1, 1).set_requires_grad();
  Tensor m = x > Tensor::zeros({4});
  EXPECT_EQ(m.shape(), (Shape{3, 4}));
  EXPECT_FALSE(m.requires_grad());
}

TEST(Masks, BoolConvertsAsNonzeroAndBackAsZeroOrOne) {
  Tensor v = mask_values({0, -2, 0.5, std::nan(""), -0.0}, {5});
  Tensor b = v.to(DType::boolean);
  EXPECT_EQ(mask_bits(b), (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(b.to(DType::f32).to_f64_vector(), (std::vector<double>{0, 1, 1, 1, 0}));
  EXPECT_EQ(b.to(DType::i64).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 1, 1, 0}));
  EXPECT_EQ(dtype_size(DType::boolean), 1u);
  EXPECT_EQ(dtype_name(DType::boolean), "bool");
}

// Attention's causal mask: scores above the diagonal filled with -inf, then softmax. A row
// whose every score is masked gives zeros, never NaN; the gradient flows only where unmasked.
TEST(Masks, CausalMaskThroughSoftmaxGivesZerosWhereMaskedAndNoNan) {
  const std::int64_t t = 4;
  Tensor scores = Tensor::normal({2, t, t}, 0, 1, 3, DType::f64).set_requires_grad();
  Tensor future = triu(Tensor::ones({t, t}, DType::f64), 1) > 0.5;
  Tensor probs = softmax(scores.masked_fill(future, -INFINITY), -1);
  for (std::int64_t r = 0; r < t; ++r) {
    double row = 0;
    for (std::int64_t c = 0; c < t; ++c) {
      const double p = probs.at({1, r, c});
      if (c > r) {
        EXPECT_EQ(p, 0.0);
      }
      row += p;
    }
    EXPECT_NEAR(row, 1.0, 1e-12);
  }
  (probs * Tensor::normal({2, t, t}, 0, 1, 4, DType::f64)).sum().backward();
  for (std::int64_t r = 0; r < t; ++r) {
    for (std::int64_t c = r + 1; c < t; ++c) EXPECT_EQ(scores.grad().at({0, r, c}), 0.0);
  }

  Tensor all_masked = Tensor::full({2, 3}, -INFINITY, DType::f32);
  EXPECT_EQ(softmax(all_masked, 1).to_f64_vector(), std::vector<double>(6, 0.0));
  // log_softmax of a fully masked row: -inf everywhere, as log(0) (PyTorch gives NaN).
  for (double v : log_softmax(all_masked, 1).to_f64_vector()) EXPECT_EQ(v, -INFINITY);
}

TEST(Masks, WhereTakesGradientsOnlyFromTheSideItPicks) {
  Tensor cond = mask_values({1, 0, 1}, {3}).to(DType::boolean);
  Tensor a = Tensor::full({2, 3}, 1.0, DType::f64).set_requires_grad();
  Tensor b = Tensor::full({3}, 5.0, DType::f64).set_requires_grad();
  Tensor out = where(cond, a, b);
  EXPECT_EQ(out.to_f64_vector(), (std::vector<double>{1, 5, 1, 1, 5, 1}));
  out.sum().backward();
  EXPECT_EQ(a.grad().to_f64_vector(), (std::vector<double>{1, 0, 1, 1, 0, 1}));
  EXPECT_EQ(b.grad().to_f64_vector(), (std::vector<double>{0, 2, 0}));
  expect_error_containing([&] { where(a > 0, a, b.to(DType::f32)); }, "where");
  expect_error_containing([&] { a.masked_fill(a, 0.0); }, "argument 'condition'");
}

TEST(Dropout, TheMaskIsAPureFunctionOfSeedCounterAndElement) {
  Tensor x = Tensor::ones({64, 1000}, DType::f32);
  Tensor first = dropout(x, 0.25, true, 7, 3);
  EXPECT_EQ(first.to_vector<float>(), dropout(x, 0.25, true, 7, 3).to_vector<float>());
  EXPECT_NE(first.to_vector<float>(), dropout(x, 0.25, true, 7, 4).to_vector<float>());
  EXPECT_NE(first.to_vector<float>(), dropout(x, 0.25, true, 8, 3).to_vector<float>());
  // Element i depends on i alone: a prefix of the tensor is the prefix of its mask.
  Tensor part = dropout(Tensor::ones({1000}, DType::f32), 0.25, true, 7, 3);
  EXPECT_EQ(part.to_vector<float>(), first.narrow(0, 0, 1).reshape({1000}).to_vector<float>());
  std::int64_t kept = 0;
  for (float v : first.to_vector<float>()) {
    ASSERT_TRUE(v == 0.0f || v == 1.0f / 0.75f) << v;
    kept += v != 0.0f;
  }
  EXPECT_NEAR(static_cast<double>(kept) / 64000.0, 0.75, 0.01);
}

TEST(Dropout, BackwardIsTheSameMaskAndEvalIsIdentity) {
  Tensor x = Tensor::normal({8, 16}, 0, 1, 2, DType::f64).set_requires_grad();
  Tensor y = dropout(x, 0.5, true, 1, 9);
  y.sum().backward();
  const auto out = y.to_f64_vector(), grad = x.grad().to_f64_vector();
  for (std::size_t i = 0; i < out.size(); ++i) EXPECT_EQ(grad[i], out[i] == 0 ? 0.0 : 2.0);
  Tensor z = dropout(x, 0.5, false, 1, 9);
  EXPECT_EQ(z.to_f64_vector(), x.to_f64_vector());
  EXPECT_EQ(dropout(x, 0.0, true, 1, 9).to_f64_vector(), x.to_f64_vector());
  for (double p : {-0.1, 1.0, 2.0, std::nan(""), double(INFINITY)}) {
    expect_error_containing([&] { dropout(x, p, true, 1, 9); }, "argument 'p'");
    expect_error_containing([&] { dropout(x, p, false, 1, 9); }, "argument 'p'");
  }
}

TEST(Arange, CountsAsPyTorchAndNamesBadArguments) {
  EXPECT_EQ(arange(5).to_vector<std::int64_t>(), (std::vector<std::int64_t>{0, 1, 2, 3, 4}));
  EXPECT_EQ(arange(1, 1.3, 0.1, DType::f64).numel(), 4);
  EXPECT_EQ(arange(3, -3, -2, DType::i32).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{3, 1, -1}));
  EXPECT_EQ(arange(2, 2, 1, DType::f32).numel(), 0);
  expect_error_containing([] { arange(0, 5, 0, DType::f32); }, "argument 'step'");
  expect_error_containing([] { arange(0, 5, -1, DType::f32); }, "argument 'step'");
  expect_error_containing([] { arange(0, INFINITY, 1, DType::f32); }, "arange");
  expect_error_containing([] { arange(0, 1e300, 1, DType::i64); }, "arange");
  expect_error_containing([] { arange(3, DType::boolean); }, "argument 'dtype'");
}

TEST(Cat, JoinsViewsAndSplitsTheGradientBack) {
  Tensor a = Tensor::normal({2, 3}, 0, 1, 1, DType::f64).set_requires_grad();
  Tensor b = Tensor::normal({3, 2}, 0, 1, 2, DType::f64).set_requires_grad();
  Tensor joined = cat({a, b.t()}, 0);  // a view joins without a copy of its own
  ASSERT_EQ(joined.shape(), (Shape{4, 3}));
  EXPECT_EQ(joined.at({3, 1}), b.at({1, 1}));
  EXPECT_EQ(joined.at({1, 2}), a.at({1, 2}));
  Tensor w = Tensor::normal({4, 3}, 0, 1, 3, DType::f64);
  (joined * w).sum().backward();
  EXPECT_EQ(a.grad().to_f64_vector(), w.narrow(0, 0, 2).clone().to_f64_vector());
  EXPECT_EQ(b.grad().to_f64_vector(), w.narrow(0, 2, 2).t().clone().to_f64_vector());
  expect_error_containing([&] { cat({}, 0); }, "cat: argument 'tensors': expected one or more");
  expect_error_containing(
      [&] {
        cat({a, a.reshape({6})}, 0);
      },
      "argument 'tensors[1]': expected a tensor of rank 2");
  expect_error_containing([&] { cat({a, Tensor()}, 0); }, "argument 'tensors[1]'");
}

TEST(Stack, AddsAnAxisAtAnyPlaceAndNamesTheTensorOfAnotherShape) {
  Tensor a = mask_values({1, 2, 3}, {3}), b = mask_values({4, 5, 6}, {3});
  EXPECT_EQ(stack({a, b}).shape(), (Shape{2, 3}));
  EXPECT_EQ(stack({a, b}).to_f64_vector(), (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(stack({a, b}, 1).to_f64_vector(), (std::vector<double>{1, 4, 2, 5, 3, 6}));
  EXPECT_EQ(stack({a, b}, -1).shape(), (Shape{3, 2}));
  EXPECT_EQ(stack({Tensor::full({}, 2.0), Tensor::full({}, 3.0)}).to_f64_vector(),
            (std::vector<double>{2, 3}));
  expect_error_containing(
      [&] {
        stack({a, b.narrow(0, 0, 2)});
      },
      "stack: argument 'tensors[1]': expected shape [3] (as tensors[0])");
  expect_error_containing([&] { stack({a, b}, 2); }, "argument 'dim': expected a dim in [-2, 1]");
  expect_error_containing([&] { stack({}); }, "stack: argument 'tensors'");
}

TEST(Masks, BoolTensorsRoundTripThroughSafetensorsAndBadBytesAreRefused) {
  testing::ScratchDir dir;
  const std::string path = dir.file("mask.safetensors");
  Tensor mask = mask_values({0, 1, 1, 0, 1, 0}, {2, 3}) > 0.5;
  save_safetensors(path, {{"mask", mask}});
  StateDict back = load_safetensors(path);
  ASSERT_EQ(back.size(), 1u);
  EXPECT_EQ(back[0].second.dtype(), DType::boolean);
  EXPECT_EQ(mask_bits(back[0].second), mask_bits(mask));
  {  // the last data byte, mask's element 5, made 2
    std::fstream f(path, std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(-1, std::ios::end);
    f.put(2);
  }
  expect_error_containing([&] { load_safetensors(path); }, "BOOL bytes that are 0 or 1");
}

// Outputs of 16 MiB and more are written with streaming stores (ops/common/streaming.h): each
// op's large output holds the bits a small one stores directly, for rows and thread parts that
// start off a 16-byte boundary and blocks that end short.
TEST(Streaming, LargeOutputsHoldTheBitsOfSmallOnes) {
  constexpr std::int64_t kRows = 4099, kWidth = 1027;  // 16.8 MB of f32: streamed
  const Tensor x = Tensor::normal({kRows, kWidth}, 0, 2, 1);
  const Tensor g = Tensor::normal({kRows, kWidth}, 0, 1, 2);
  const Tensor w = Tensor::normal({kWidth}, 1, 0.1, 3), b = Tensor::normal({kWidth}, 0, 0.1, 4);
  auto check = [&](const char* what, auto op) {
    const Tensor whole = op(x, g);
    for (const std::int64_t start : {std::int64_t{0}, std::int64_t{1}, kRows / 2, kRows - 7}) {
      const Tensor part =
          op(x.narrow(0, start, 7).contiguous(), g.narrow(0, start, 7).contiguous());
      const Tensor expected = whole.narrow(0, start, 7).contiguous();
      ASSERT_EQ(part.nbytes(), expected.nbytes()) << what;
      EXPECT_EQ(std::memcmp(part.raw_data(), expected.raw_data(), part.nbytes()), 0)
          << what << ": rows " << start << " to " << start + 6 << " differ";
    }
  };
  using T = const Tensor&;
  check("gelu", [](T x, T) { return gelu(x, "tanh"); });
  check("gelu_backward", [](T x, T g) { return gelu_backward(g, x, "tanh"); });
  check("add of a row", [&](T x, T) { return add(x, b); });
  check("softmax", [](T x, T) { return softmax(x, -1); });
  check("softmax_backward", [](T x, T g) { return softmax_backward(g, softmax(x, -1), -1); });
  check("log_softmax", [](T x, T) { return log_softmax(x, -1); });
  check("log_softmax_backward",
        [](T x, T g) { return log_softmax_backward(g, log_softmax(x, -1), -1); });
  check("layer_norm", [&](T x, T) { return layer_norm(x, {kWidth}, w, b); });
  check("layer_norm's dx", [&](T x, T g) {
    Tensor leaf = x * 1.0;
    leaf.set_requires_grad();
    layer_norm(leaf, {kWidth}, w, b).backward(g);
    return leaf.grad();
  });
}

}  // namespace
}  // namespace mg
