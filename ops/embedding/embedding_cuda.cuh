// The device launcher behind embedding_cuda (embedding_cuda.cpp): plain pointers and sizes.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace mg::cuda {

// out[i, :] = table[ids[i], :] for i < count; ids already checked to lie in the table.
//   table [V, width], ids [count], out [count, width]. T: float or double; Id: int32_t or int64_t.
template <typename T, typename Id>
void gather_rows(const T* table, const Id* ids, T* out, std::int64_t count, std::int64_t width,
                 cudaStream_t stream);

}  // namespace mg::cuda
