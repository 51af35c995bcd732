// Token-id checks shared by the embedding ops: every backend reports an out-of-range id with
// the same mg::Error, naming the id, its position and the table's row count.
#pragma once

#include <cstdint>
#include <string>

#include "minigraph/error.h"
#include "minigraph/tensor.h"

namespace mg {

[[noreturn]] void throw_bad_id(const std::string& op, std::int64_t id, std::int64_t flat_index,
                               const Shape& shape, std::int64_t rows);

// Throws for the first id outside [0, rows). `ids` lives on the CPU.
template <typename Id>
void check_ids_in_range(const std::string& op, const Id* ids, const Shape& shape,
                        std::int64_t rows) {
  const std::int64_t n = shape_numel(shape);
  for (std::int64_t i = 0; i < n; ++i) {
    if (ids[i] < 0 || ids[i] >= rows) [[unlikely]] {
      throw_bad_id(op, static_cast<std::int64_t>(ids[i]), i, shape, rows);
    }
  }
}

}  // namespace mg
