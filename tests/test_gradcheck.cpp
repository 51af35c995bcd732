// gradcheck itself: it reports per input, catches a wrong backward rule, keeps the caller's
// gradients, and samples big inputs while still checking every row.
#include <gtest/gtest.h>

#include "minigraph/gtest.h"
#include "minigraph/minigraph.h"

namespace mg {
namespace {

// An op whose backward is wrong on purpose (gradient of 2x claimed as x): gradcheck must fail.
const OpDef& broken_double() {
  static const OpDef& op = []() -> const OpDef& {
    OpDef def;
    def.name = "test_broken_double";
    def.inputs = {"x"};
    def.infer = [](const OpDef&, std::span<const Tensor> in, const std::any&) {
      return OutputSpec{in[0].shape(), in[0].dtype()};
    };
    def.kernels[0] = [](const KernelContext& ctx) {
      auto* out = ctx.out.data<double>();
      const auto* x = ctx.inputs[0].data<double>();
      for (std::int64_t i = 0; i < ctx.out.numel(); ++i) out[i] = 2 * x[i];
    };
    def.backward = [](const BackwardContext& ctx) { return std::vector<Tensor>{ctx.grad_out}; };
    return OpRegistry::instance().add(std::move(def));
  }();
  return op;
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

TEST(Gradcheck, RefusesF32Inputs) {
  Tensor x = Tensor::zeros({2}).set_requires_grad();
  EXPECT_THROW(gradcheck([](const std::vector<Tensor>& in) { return in[0]; }, {x}), Error);
}

}  // namespace
}  // namespace mg
