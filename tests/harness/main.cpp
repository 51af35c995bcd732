// The op harness over the built-in ops, and the harness's own checks of how it compares.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

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

}  // namespace

int main(int argc, char** argv) {
  mg::register_builtin_ops();
  return mg::testing::run_op_harness(argc, argv);
}
