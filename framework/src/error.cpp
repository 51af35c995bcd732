#include "minigraph/error.h"

namespace mg {

Error::Error(std::string op, std::string argument, std::string expected, std::string actual)
    : std::runtime_error(
          fmt::format("{}: argument '{}': expected {}, got {}", op, argument, expected, actual)),
      op_(std::move(op)),
      argument_(std::move(argument)),
      expected_(std::move(expected)),
      actual_(std::move(actual)) {}

namespace detail {
void throw_error(std::string op, std::string argument, std::string expected, std::string actual) {
  throw Error(std::move(op), std::move(argument), std::move(expected), std::move(actual));
}
}  // namespace detail

}  // namespace mg
