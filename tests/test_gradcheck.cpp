// gradcheck itself: it reports per input, catches a wrong backward rule, keeps the caller's
// gradients, and samples big inputs while still checking every row.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>

#include "minigraph/gtest.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

// An op whose backward is wrong on purpose (gradient of 2x claimed as x): gradcheck must fail.
// A test op on f64: out[i] = x[i] * Percent / 100, with the backward given (wrong on purpose).
template <int Percent>
const OpDef& scaling_op(const char* name,
                        std::function<std::vector<Tensor>(const BackwardContext&)> backward) {
  OpDef def;
  def.name = name;
  def.inputs = {"x"};
  def.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
    return OutputSpec{in[0].shape(), in[0].dtype()};
  };
  def.kernels = device_kernels([](const KernelContext& ctx) {
    auto* out = ctx.out.data<double>();
    const auto* x = ctx.inputs[0].data<double>();
    for (std::int64_t i = 0; i < ctx.out.numel(); ++i) out[i] = x[i] * Percent / 100;
  });
  def.backward = std::move(backward);
  return OpRegistry::instance().add(std::move(def));
}

const OpDef& broken_double() {
  static const OpDef& op = scaling_op<200>("test_broken_double", [](const BackwardContext& ctx) {
    return std::vector<Tensor>{ctx.grad_out};
  });
  return op;
}

// y = x / 100, with a backward that is right but for `offset` added to the gradient of the rows
// in `wrong_rows` (every row when empty): small true gradients, so a 1e-3 error is far outside
// the default tolerance (atol 1e-5 + rtol 1e-3 * |0.01|).
struct Skew {
  double offset = 1e-3;
  std::vector<std::int64_t> wrong_rows;
};
const OpDef& skewed_scale() {
  static const OpDef& op = scaling_op<1>("test_skewed_scale", [](const BackwardContext& ctx) {
    const auto& skew = std::any_cast<const Skew&>(ctx.attrs);
    Tensor g = ctx.grad_out.clone();
    const std::int64_t width = g.dim() > 1 ? g.size(-1) : 1;
    for (std::int64_t i = 0; i < g.numel(); ++i) {
      const std::int64_t row = i / width;
      const bool wrong =
          skew.wrong_rows.empty() ||
          std::find(skew.wrong_rows.begin(), skew.wrong_rows.end(), row) != skew.wrong_rows.end();
      g.set_flat(i, g.at_flat(i) / 100 + (wrong ? skew.offset : 0.0));
    }
    return std::vector<Tensor>{g};
  });
  return op;
}

TEST(Gradcheck, DefaultToleranceCatchesAGradientOffBy1em3) {
  Tensor x = Tensor::normal({4, 3}, 0, 1, 6, DType::f64).set_requires_grad();
  auto run = [&](double offset) {
    return gradcheck(
        [offset](const std::vector<Tensor>& in) {
          return apply_op(skewed_scale(), {in[0]}, Skew{offset, {}});
        },
        {x}, {"x"});
  };
  EXPECT_TRUE(run(0).passed()) << run(0).str();
  auto report = run(1e-3);
  EXPECT_FALSE(report.passed()) << report.str();
  EXPECT_NEAR(report.inputs[0].max_abs_error, 1e-3, 1e-6);
}

TEST(Gradcheck, ANanGradientFails) {
  Tensor x = Tensor::normal({2, 3}, 0, 1, 9, DType::f64).set_requires_grad();
  auto report = gradcheck(
      [](const std::vector<Tensor>& in) {
        return apply_op(skewed_scale(), {in[0]}, Skew{std::nan(""), {1}});
      },
      {x}, {"x"});
  EXPECT_FALSE(report.passed()) << report.str();
  EXPECT_TRUE(std::isinf(report.inputs[0].max_abs_error)) << report.str();
  EXPECT_GE(report.inputs[0].worst_index, 3);  // a row-1 element
}

// y = x, with a backward that hands back the upstream gradient reversed: right only when the
// upstream gradient is symmetric, as an all-ones one is. gradcheck's random weights catch it.
const OpDef& reversed_identity() {
  static const OpDef& op =
      scaling_op<100>("test_reversed_identity", [](const BackwardContext& ctx) {
        Tensor g = ctx.grad_out.clone();
        const std::int64_t n = g.numel();
        for (std::int64_t i = 0; i < n; ++i) g.set_flat(i, ctx.grad_out.at_flat(n - 1 - i));
        return std::vector<Tensor>{g};
      });
  return op;
}

TEST(Gradcheck, CatchesAPermutedGradient) {
  Tensor x = Tensor::normal({6}, 0, 1, 10, DType::f64).set_requires_grad();
  auto report = gradcheck(
      [](const std::vector<Tensor>& in) { return apply_op(reversed_identity(), {in[0]}); }, {x},
      {"x"});
  EXPECT_FALSE(report.passed()) << report.str();
}

TEST(Gradcheck, PassesACorrectOpAndReportsEachInput) {
  Tensor a = Tensor::normal({3, 4}, 0, 1, 1, DType::f64).set_requires_grad();
  Tensor b = Tensor::normal({4, 2}, 0, 1, 2, DType::f64).set_requires_grad();
  auto report = gradcheck([](const std::vector<Tensor>& in) { return matmul(in[0], in[1]); },
                          {a, b}, {"a", "b"});
  ASSERT_TRUE(report.passed()) << report.str();
  ASSERT_EQ(report.inputs.size(), 2u);
  EXPECT_EQ(report.inputs[0].name, "a");
  EXPECT_EQ(report.inputs[0].checked, 12);
  EXPECT_EQ(report.inputs[1].checked, 8);
  EXPECT_LT(report.inputs[0].max_abs_error, 1e-8);
}

TEST(Gradcheck, CatchesAWrongBackwardRule) {
  Tensor x = Tensor::normal({5}, 0, 1, 3, DType::f64).set_requires_grad();
  auto report = gradcheck(
      [](const std::vector<Tensor>& in) { return apply_op(broken_double(), {in[0]}); }, {x}, {"x"});
  EXPECT_FALSE(report.passed());
  auto assertion = gradcheck_passed(report);
  EXPECT_FALSE(assertion);
  EXPECT_NE(std::string(assertion.message()).find("gradcheck failed"), std::string::npos);
  EXPECT_FALSE(report.inputs[0].passed);
  EXPECT_NEAR(report.inputs[0].worst_numeric, 2 * report.inputs[0].worst_analytic, 1e-6);
  EXPECT_NE(report.str().find("FAIL"), std::string::npos);
}

TEST(Gradcheck, KeepsTheCallersGradients) {
  Tensor x = Tensor::normal({3}, 0, 1, 4, DType::f64).set_requires_grad();
  add(x, x).backward(Tensor::ones({3}, DType::f64));
  auto before = x.grad().to_vector<double>();
  gradcheck([](const std::vector<Tensor>& in) { return add(in[0], in[0]); }, {x});
  EXPECT_EQ(x.grad().to_vector<double>(), before);
}

TEST(Gradcheck, SamplesBigInputsButChecksEveryRow) {
  Tensor table = Tensor::normal({50, 20}, 0, 1, 5, DType::f64).set_requires_grad();
  Tensor ids = Tensor::from_vector<std::int64_t>({1, 1, 1, 7}, {4});
  GradcheckOptions options;
  options.max_checks_per_input = 60;
  auto report = gradcheck([&](const std::vector<Tensor>& in) { return embedding(in[0], ids); },
                          {table}, {"table"}, options);
  EXPECT_TRUE(report.passed()) << report.str();
  EXPECT_EQ(report.inputs[0].checked, 60);
}

// Sampled mode must visit every row: a gradient wrong in any single row of a 60-row table
// (checked with a budget of 70 elements of its 600) is caught, whichever row it is.
TEST(Gradcheck, SampledModeCatchesAWrongGradientInAnySingleRow) {
  Tensor table = Tensor::normal({60, 10}, 0, 1, 7, DType::f64).set_requires_grad();
  GradcheckOptions options;
  options.max_checks_per_input = 70;
  std::vector<std::int64_t> missed;
  for (std::int64_t row = 0; row < 60; ++row) {
    auto report = gradcheck(
        [row](const std::vector<Tensor>& in) {
          return apply_op(skewed_scale(), {in[0]}, Skew{1e-3, {row}});
        },
        {table}, {"table"}, options);
    EXPECT_EQ(report.inputs[0].checked, 70);
    if (report.passed()) missed.push_back(row);
  }
  EXPECT_TRUE(missed.empty()) << "rows whose wrong gradient sampling missed: "
                              << fmt::format("{}", fmt::join(missed, ", "));
}

TEST(Gradcheck, RefusesF32Inputs) {
  Tensor x = Tensor::zeros({2}).set_requires_grad();
  try {
    gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {x});
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "gradcheck");
    EXPECT_NE(e.expected().find("f64"), std::string::npos) << e.what();
    EXPECT_NE(e.actual().find("f32"), std::string::npos) << e.what();
  }
}

}  // namespace
}  // namespace mg
