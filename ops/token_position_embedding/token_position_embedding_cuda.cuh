// The device launcher behind token_position_embedding_cuda (token_position_embedding_cuda.cpp).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// out[i, :] = tok[ids[i], :] + pos[i % length, :] for i < count; ids already checked.
//   tok [V, width], pos [length, width] (the window from the offset), ids [count],
//   out [count, width]. T: float or double; Id: int32_t or int64_t.
template <typename T, typename Id>
void gather_rows_plus_positions(const T* tok, const T* pos, const Id* ids, T* out,
                                std::int64_t count, std::int64_t length, std::int64_t width,
                                cudaStream_t stream);

}  // namespace mg::cuda
