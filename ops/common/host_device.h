// MG_HOST_DEVICE: __host__ __device__ under nvcc, nothing for the host compiler, for code both
// compile (the elementwise functors). Inside such code, __CUDA_ARCH__ tells the device pass
// (CUDA's math functions) from the host one (<cmath>).
#pragma once

#ifdef __CUDACC__
#define MG_HOST_DEVICE __host__ __device__
#else
#define MG_HOST_DEVICE
#endif
