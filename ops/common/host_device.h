// MG_HOST_DEVICE: __host__ __device__ under nvcc, nothing for the host compiler, for code both
// compile (the families' functors). Such code calls <cmath>'s std:: functions, which nvcc maps to
// CUDA's math functions on the device.
#pragma once

#ifdef __CUDACC__
#define MG_HOST_DEVICE __host__ __device__
#else
#define MG_HOST_DEVICE
#endif
