// Runs fn and returns the mg::Error it throws; a test failure when it throws none.
#pragma once

#include <gtest/gtest.h>

#include "minigraph/error.h"

namespace mg::testing {

template <typename Fn>
Error expect_error(Fn&& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e;
  }
  ADD_FAILURE() << "expected mg::Error";
  return Error("", "", "", "");
}

}  // namespace mg::testing
