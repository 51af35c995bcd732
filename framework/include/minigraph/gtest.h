// GoogleTest support for users' own gradient checks (header-only; include it in test code):
//   EXPECT_TRUE(mg::gradcheck_passed(mg::gradcheck(fn, inputs, names)));
// On failure the message is the report: per input, the worst element and both gradients.
#pragma once

#include <gtest/gtest.h>

#include "minigraph/gradcheck.h"

namespace mg {

inline ::testing::AssertionResult gradcheck_passed(const GradcheckReport& report) {
  if (report.passed()) return ::testing::AssertionSuccess() << report.str();
  return ::testing::AssertionFailure() << "gradcheck failed:\n" << report.str();
}

}  // namespace mg
