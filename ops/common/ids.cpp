#include "ids.h"

#include <vector>

namespace mg {

namespace {

// "[1, 2]": the multi-index of a flat (row-major) index into `shape`.
std::string position_str(std::int64_t flat_index, const Shape& shape) {
  std::vector<std::int64_t> position(shape.size());
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    position[axis] = flat_index % shape[axis];
    flat_index /= shape[axis];
  }
  return shape_str(position);
}

}  // namespace

void throw_bad_id(const std::string& op, std::int64_t id, std::int64_t flat_index,
                  const Shape& shape, std::int64_t rows) {
  throw Error(op, "ids", fmt::format("ids in [0, {}) (the table's rows)", rows),
              fmt::format("id {} at position {}", id, position_str(flat_index, shape)));
}

void throw_bad_target(const std::string& op, std::int64_t target, std::int64_t flat_index,
                      const Shape& shape, std::int64_t classes, std::int64_t ignore_index) {
  throw Error(op, "targets",
              fmt::format("ids in [0, {}) or ignore_index {}", classes, ignore_index),
              fmt::format("{} at position {}", target, position_str(flat_index, shape)));
}

}  // namespace mg
