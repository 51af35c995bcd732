// Runs fn and returns the mg::Error it throws; a test failure when it throws none.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <utility>

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

// Runs fn and checks that it throws mg::Error whose message contains `text`: the type alone
// passes for a wrong check that throws for another reason.
template <typename Fn>
void expect_error_containing(Fn&& fn, const std::string& text) {
  const std::string message = expect_error(std::forward<Fn>(fn)).what();
  EXPECT_NE(message.find(text), std::string::npos)
      << "the error says: " << message << "\nexpected it to contain: " << text;
}

}  // namespace mg::testing
