#include "ids.h"

#include <vector>

namespace mg {

void throw_bad_id(const std::string& op, std::int64_t id, std::int64_t flat_index,
                  const Shape& shape, std::int64_t rows) {
  std::vector<std::int64_t> position(shape.size());
  for (std::size_t axis = shape.size(); axis-- > 0;) {
    position[axis] = flat_index % shape[axis];
    flat_index /= shape[axis];
  }
  throw Error(op, "ids", fmt::format("ids in [0, {}) (the table's rows)", rows),
              fmt::format("id {} at position {}", id, shape_str(position)));
}

}  // namespace mg
