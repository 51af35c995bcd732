// position_embedding: rows offset..offset+T-1 of a learned position table, as a view.
//   T_max table rows, T positions, D width; table [T_max, D] -> out [T, D], no copy
// It is table.narrow(0, offset, T) behind the checks of the position rule, so its backward is
// narrow's: the upstream rows placed in a [T_max, D] that is zero elsewhere. Batches share one
// position table: the add that combines tokens and positions sums the batch first.
#include "position_embedding/position_embedding.h"

#include "minigraph/error.h"
#include "position_embedding/position_rows.h"

namespace mg {

Tensor position_embedding(const Tensor& table, std::int64_t length, std::int64_t offset) {
  MG_CHECK(table.defined(), "position_embedding", "table", "a defined tensor", "an undefined one");
  MG_CHECK(is_floating(table.dtype()), "position_embedding", "table",
           "a floating-point tensor (f32, f64)", "{}", dtype_name(table.dtype()));
  MG_CHECK(table.dim() == 2, "position_embedding", "table", "rank 2", "rank {} (shape {})",
           table.dim(), shape_str(table.shape()));
  MG_CHECK(length >= 1, "position_embedding", "T", "at least one position", "{}", length);
  MG_CHECK(offset >= 0, "position_embedding", "offset", "a non-negative offset", "{}", offset);
  check_rows_within(length, offset, table.size(0), "position_embedding", "T + offset",
                    fmt::format("at most T_max = {} (the table's rows)", table.size(0)));
  return table.narrow(0, offset, length);
}

}  // namespace mg
