#include "position_embedding/position_rows.h"

#include <fmt/format.h>

#include <string>

#include "minigraph/error.h"

namespace mg {

void check_rows_within(std::int64_t length, std::int64_t offset, std::int64_t rows,
                       std::string_view op, std::string_view what, std::string_view expected) {
  std::int64_t end = 0;
  const bool wraps = __builtin_add_overflow(length, offset, &end);
  const std::string sum = wraps ? fmt::format("{} + {} (past 2^63 - 1)", length, offset)
                                : fmt::format("{} + {} = {}", length, offset, end);
  // rows >= length first, so rows - length cannot wrap (rows may be negative: an attribute).
  MG_CHECK(length >= 0 && offset >= 0 && rows >= length && offset <= rows - length, std::string(op),
           std::string(what), std::string(expected), "{} = {}", what, sum);
}

}  // namespace mg
