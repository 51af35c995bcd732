// The device launcher behind linear_cross_entropy_cuda (linear_cross_entropy_cuda.cpp): plain
// pointers and sizes. Targets are already checked: each in [0, V) or ignore_index.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// One chunk's rows of logits [rows, V]: each row's loss, logsumexp - logit[target], into
// losses [rows] (0 for an ignored row) and, when `gradients`, the row replaced in place by
// (softmax - onehot) * scale (zeros for an ignored row). T: float or double; Id: int32_t or
// int64_t.
template <typename T, typename Id>
void linear_cross_entropy_rows(T* logits, const Id* targets, std::int64_t rows, std::int64_t vocab,
                               std::int64_t ignore_index, bool gradients, double scale,
                               double* losses, cudaStream_t stream);

}  // namespace mg::cuda
