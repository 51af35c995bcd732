#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// Rows offset .. offset + T - 1 of a learned position table [T_max, D] -> [T, D]: a view that
// shares the table's memory (table.narrow(0, offset, T) behind the position rule's checks:
// a floating-point [T_max, D] table, T >= 1, offset >= 0, offset + T <= T_max).
Tensor position_embedding(const Tensor& table, std::int64_t length, std::int64_t offset = 0);

}  // namespace mg
