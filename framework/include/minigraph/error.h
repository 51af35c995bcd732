// The one error type of minigraph. Every check on user input throws mg::Error naming the op,
// the argument, what was expected and what came, so a caller can catch it and carry on:
// library code never calls exit() or abort().
#pragma once

#include <fmt/format.h>

#include <stdexcept>
#include <string>

namespace mg {

class Error : public std::runtime_error {
 public:
  Error(std::string op, std::string argument, std::string expected, std::string actual);

  const std::string& op() const { return op_; }
  const std::string& argument() const { return argument_; }
  const std::string& expected() const { return expected_; }
  const std::string& actual() const { return actual_; }

 private:
  std::string op_, argument_, expected_, actual_;
};

namespace detail {
[[noreturn]] void throw_error(std::string op, std::string argument, std::string expected,
                              std::string actual);
}  // namespace detail

}  // namespace mg

// MG_CHECK(cond, op, argument, expected, actual_fmt, args...): throws mg::Error when cond is
// false. The actual value is formatted only on failure, so checks cost nothing on the hot path.
#define MG_CHECK(cond, op, argument, expected, ...)                                        \
  do {                                                                                     \
    if (!(cond)) [[unlikely]] {                                                            \
      ::mg::detail::throw_error((op), (argument), (expected), ::fmt::format(__VA_ARGS__)); \
    }                                                                                      \
  } while (0)
