// What the kernels of every backend share (not the naive reference): the chunk's row count, so
// the CPU and CUDA agree on it. (The error for a bad target is the losses' shared one,
// common/ids.h.)
#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// Rows per chunk: as many [rows, V] logits buffers of `element_size` bytes as fit in
// chunk_bytes (the buffer is reused in place for the logits' gradient), at least one, at most
// `rows` (0 when there are no rows).
std::int64_t linear_cross_entropy_chunk_rows(std::int64_t chunk_bytes, std::int64_t vocab,
                                             std::int64_t element_size, std::int64_t rows);

}  // namespace mg
