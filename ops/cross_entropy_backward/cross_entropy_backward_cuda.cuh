// The device launcher behind cross_entropy_backward_cuda (cross_entropy_backward_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// dlogits[i, v] = g_i (softmax(logits_i)_v - [v == targets_i]), zero rows where targets_i is
// ignore_index; g_i = grad_out[i] when per_row, else grad_out[0] / divisor. Targets already
// checked. logits, dlogits [rows, classes]; targets [rows]; grad_out [rows] or [1].
// T: float or double; Id: int32_t or int64_t.
template <typename T, typename Id>
void cross_entropy_backward_rows(const T* logits, const Id* targets, const T* grad_out,
                                 bool per_row, double divisor, std::int64_t rows,
                                 std::int64_t classes, std::int64_t ignore_index, T* dlogits,
                                 cudaStream_t stream);

}  // namespace mg::cuda
