// What the kernels of every backend share (not the naive reference): the chunk's row count
// and the error for a bad target, so the CPU and CUDA agree on both.
#pragma once

#include <cstdint>

#include "minigraph/tensor.h"

namespace mg {

// Rows per chunk: as many [rows, V] logits buffers of `element_size` bytes as fit in
// chunk_bytes (the buffer is reused in place for the logits' gradient), at least one, at most
// `rows` (0 when there are no rows).
std::int64_t linear_cross_entropy_chunk_rows(std::int64_t chunk_bytes, std::int64_t vocab,
                                             std::int64_t element_size, std::int64_t rows);

// Throws the mg::Error for a target outside [0, V) that is not ignore_index, naming its value
// and its position in the targets' shape.
[[noreturn]] void throw_bad_target(std::int64_t target, std::int64_t flat_index, const Shape& shape,
                                   std::int64_t vocab, std::int64_t ignore_index);

}  // namespace mg
