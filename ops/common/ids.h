// Token-id checks shared by the embedding ops and the losses: every backend reports an
// out-of-range id with the same mg::Error, naming the id, its position and the valid range.
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

// The targets of a loss (argument "targets"): class ids in [0, classes), or ignore_index for
// rows the loss skips. The error names the value, its position, the range and ignore_index.
[[noreturn]] void throw_bad_target(const std::string& op, std::int64_t target,
                                   std::int64_t flat_index, const Shape& shape,
                                   std::int64_t classes, std::int64_t ignore_index);

// Throws for the first target outside [0, classes) that is not ignore_index; returns how many
// targets are not ignore_index (the rows a mean counts). `targets` lives on the CPU.
template <typename Id>
std::int64_t check_targets_in_range(const std::string& op, const Id* targets, const Shape& shape,
                                    std::int64_t classes, std::int64_t ignore_index) {
  const std::int64_t n = shape_numel(shape);
  std::int64_t counted = 0;
  for (std::int64_t i = 0; i < n; ++i) {
    const auto t = static_cast<std::int64_t>(targets[i]);
    if (t == ignore_index) continue;
    if (t < 0 || t >= classes) [[unlikely]] {
      throw_bad_target(op, t, i, shape, classes, ignore_index);
    }
    ++counted;
  }
  return counted;
}

}  // namespace mg
