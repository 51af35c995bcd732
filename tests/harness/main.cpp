// The op harness over the built-in ops, and the harness's own checks of how it compares.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "minigraph/backend.h"
#include "minigraph/ops/builtin_ops.h"
#include "minigraph/testing/op_harness.h"

namespace {

// A kernel that gets the sign of an infinity wrong, turns a number into inf or NaN, or leaves
// the NaN poison in place must fail: |inf - (-inf)| - tolerance is NaN, which no
// "excess > tolerance" test catches.
TEST(OpHarness, CompareRejectsNonFiniteMismatches) {
  using mg::Tensor;
  const double inf = INFINITY, nan = std::numeric_limits<double>::quiet_NaN();
  auto compare = [](double actual, double expected) {
    return mg::testing::compare_tensors(Tensor::from_vector<double>({1.0, actual}, {2}),
                                        Tensor::from_vector<double>({1.0, expected}, {2}), 1e-5,
                                        1e-4);
  };
  EXPECT_EQ(compare(inf, inf), "");
  EXPECT_EQ(compare(-inf, -inf), "");
  EXPECT_EQ(compare(1.0 + 1e-6, 1.0), "");
  EXPECT_NE(compare(inf, -inf), "");
  EXPECT_NE(compare(-inf, inf), "");
  EXPECT_NE(compare(inf, 1.0), "");
  EXPECT_NE(compare(1.0, -inf), "");
  EXPECT_NE(compare(nan, 1.0), "");
  EXPECT_NE(compare(1.0, nan), "");
  EXPECT_NE(compare(nan, inf), "");
  EXPECT_NE(compare(nan, nan), "");  // NaN is the poison of unwritten outputs
  EXPECT_NE(compare(1.1, 1.0), "");
  // The worst element is the non-finite one, even after a finite mismatch.
  const std::string diff =
      mg::testing::compare_tensors(Tensor::from_vector<double>({2.0, -inf}, {2}),
                                   Tensor::from_vector<double>({1.0, inf}, {2}), 1e-5, 1e-4);
  EXPECT_NE(diff.find("#1"), std::string::npos) << diff;
}

// An op without cases, reference or a kernel for a built backend is named by missing_parts,
// which fails its ops.<op>_complete test; a complete op has no gaps.
TEST(OpHarness, MissingPartsNamesWhatAnOpLacks) {
  mg::register_builtin_ops();
  EXPECT_TRUE(mg::testing::missing_parts(mg::OpRegistry::instance().get("add")).empty());
  mg::OpDef bare = mg::OpRegistry::instance().get("add");
  bare.cases = nullptr;
  bare.reference = nullptr;
  bare.kernels = mg::device_kernels(bare.kernel(mg::DeviceKind::cpu));  // no CUDA kernel
  bare.kernels[0].dtypes = {mg::DType::f64, mg::DType::i32};
  const auto gaps = mg::testing::missing_parts(bare);
  const std::string all = fmt::format("{}", fmt::join(gaps, "\n"));
  EXPECT_NE(all.find("no cases"), std::string::npos) << all;
  EXPECT_NE(all.find("no naive reference"), std::string::npos) << all;
  EXPECT_NE(all.find("takes i32"), std::string::npos) << all;
  EXPECT_EQ(all.find("no cpu kernel"), std::string::npos) << all;
  EXPECT_EQ(all.find("no cuda kernel") != std::string::npos,
            mg::backend_built(mg::DeviceKind::cuda))
      << all;
}

}  // namespace

int main(int argc, char** argv) {
  mg::register_builtin_ops();
  return mg::testing::run_op_harness(argc, argv);
}
