// Settings and statistics of the CUDA backend. Present in builds with the CUDA backend only
// (CMake's MINIGRAPH_WITH_CUDA, exported by the installed package); tensors reach a GPU with
// `tensor.to(Device::cuda(0))` and modules with `module.to(Device::cuda(0))`.
#pragma once

#include <cstddef>

namespace mg::cuda {

// Lets f32 matmuls use TF32 tensor cores (10-bit mantissa inputs, ~8x the FP32 rate on
// H100/H200). Off by default: f32 products are then exact f32, as on the CPU. Process-wide.
void set_allow_tf32(bool allow);
bool allow_tf32();

// What the caching allocator of a device holds.
struct MemoryStats {
  std::size_t device_allocations = 0;  // cudaMalloc calls so far: flat in steady state
  std::size_t reserved_bytes = 0;      // held from the driver: in use plus pooled
  std::size_t in_use_bytes = 0;        // held by live tensors and scratch buffers
};
// Throws mg::Error when that device is not available.
MemoryStats memory_stats(int device = 0);
// Returns the pooled (unused) blocks of a device to the driver, e.g. before handing the GPU to
// another library.
void empty_cache(int device = 0);

}  // namespace mg::cuda
