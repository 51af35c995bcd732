// The position ops' one rule (position_embedding, its backward, token_position_embedding): the
// rows offset..offset+length-1 of a position table lie within [0, rows).
#pragma once

#include <cstdint>
#include <string_view>

namespace mg {

// Decided without forming offset + length (which wraps for offsets near INT64_MAX): mg::Error
// naming `op` and `what` ("T + offset") otherwise, e.g. "expected <expected>, got T + offset = 2
// + 9223372036854775807 (past 2^63 - 1)". Negative offsets and lengths are refused too.
void check_rows_within(std::int64_t length, std::int64_t offset, std::int64_t rows,
                       std::string_view op, std::string_view what, std::string_view expected);

}  // namespace mg
