// MG_CUDA_CHECK: every CUDA runtime call's status becomes an mg::Error naming the call, the
// error's name and code, and where it was made. Plain C++17 for nvcc: .cu files include it.
#pragma once

#include <cuda_runtime_api.h>

namespace mg::cuda {

// Throws mg::Error for a failed call (and clears CUDA's last-error slot, so the next check
// does not report the same failure again).
[[noreturn]] void throw_cuda_error(cudaError_t status, const char* call, const char* file,
                                   int line);

inline void check_cuda(cudaError_t status, const char* call, const char* file, int line) {
  if (status != cudaSuccess) throw_cuda_error(status, call, file, line);
}

}  // namespace mg::cuda

#define MG_CUDA_CHECK(call) ::mg::cuda::check_cuda((call), #call, __FILE__, __LINE__)
