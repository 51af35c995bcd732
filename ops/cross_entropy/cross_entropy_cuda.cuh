// The device launchers behind cross_entropy_cuda (cross_entropy_cuda.cpp): plain pointers and
// sizes. Targets are already checked: each in [0, classes) or ignore_index.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// The loss of every row, logsumexp(logits_i) - logits_i[targets_i] (0 for ignored rows), into
// per_row (the output of reduction none) when it is not null, else into losses (f64 scratch).
//   logits [rows, classes], targets [rows], per_row / losses [rows].
// T: float or double; Id: int32_t or int64_t.
template <typename T, typename Id>
void cross_entropy_rows(const T* logits, const Id* targets, std::int64_t rows, std::int64_t classes,
                        std::int64_t ignore_index, T* per_row, double* losses, cudaStream_t stream);

// out[0] = the sum of losses[0..rows) (one block, a fixed tree: the same bits on every run),
// divided by counted for a mean (NaN when counted is 0).
template <typename T>
void reduce_row_losses(const double* losses, std::int64_t rows, bool mean, std::int64_t counted,
                       T* out, cudaStream_t stream);

}  // namespace mg::cuda
