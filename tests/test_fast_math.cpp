// common/fast_math.h's exp, against libm's in double over float's whole range: the function
// softmax, GELU, sigmoid and attention compute their exps with.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>

#include "common/fast_math.h"

namespace mg {
namespace {

TEST(ExpVectorizable, WithinOneAndAHalfUlpOfLibmFromTheFlushToTheOverflow) {
  double worst_ulp = 0;
  float worst_at = 0;
  std::int64_t checked = 0;
  for (std::uint64_t bits = 0; bits <= 0xffffffffu; bits += 997) {
    const float x = std::bit_cast<float>(static_cast<std::uint32_t>(bits));
    const float got = exp_vectorizable(x);
    if (std::isnan(x)) {
      ASSERT_TRUE(std::isnan(got)) << "exp of a NaN";
      continue;
    }
    if (x < -86.98f) {
      ASSERT_EQ(got, 0.0f) << "exp(" << x << ") is flushed to 0";
      continue;
    }
    const double want = std::exp(static_cast<double>(x));
    if (want > std::numeric_limits<float>::max()) {
      ASSERT_EQ(got, std::numeric_limits<float>::infinity()) << "exp(" << x << ") overflows";
      continue;
    }
    const auto rounded = static_cast<float>(want);
    const double ulp = std::nextafter(rounded, std::numeric_limits<float>::infinity()) - rounded;
    const double error = std::fabs(static_cast<double>(got) - want) / ulp;
    if (error > worst_ulp) worst_ulp = error, worst_at = x;
    ++checked;
  }
  EXPECT_GT(checked, 2'000'000);
  EXPECT_LE(worst_ulp, 1.5) << "at x = " << worst_at;
}

TEST(ExpVectorizable, EndsAndSpecialValues) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(exp_vectorizable(0.0f), 1.0f);
  EXPECT_EQ(exp_vectorizable(-0.0f), 1.0f);
  EXPECT_EQ(exp_vectorizable(inf), inf);
  EXPECT_EQ(exp_vectorizable(-inf), 0.0f);
  EXPECT_EQ(exp_vectorizable(1e30f), inf);
  EXPECT_EQ(exp_vectorizable(-1e30f), 0.0f);
  EXPECT_EQ(exp_vectorizable(88.723f), inf);  // past ln(FLT_MAX) = 88.72284
  EXPECT_NEAR(exp_vectorizable(88.72f), 3.3931806e38f, 3.3931806e38f * 2e-7f);
  // The smallest result before the flush, 2^-125.5 and up: a normal float, not 0.
  const double tiny = std::exp(static_cast<double>(-86.97f));
  EXPECT_NEAR(exp_vectorizable(-86.97f), tiny, tiny * 2e-7);
  EXPECT_EQ(exp_vectorizable(-86.99f), 0.0f);
  EXPECT_EQ(exp_vectorizable(1.0f), 2.71828183f);
  EXPECT_TRUE(std::isnan(exp_vectorizable(std::numeric_limits<float>::quiet_NaN())));
}

}  // namespace
}  // namespace mg
