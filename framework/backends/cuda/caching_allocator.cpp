// The caching device allocator (see caching_allocator.h).
#include "caching_allocator.h"

#include <cuda_runtime_api.h>

#include "cuda_check.h"
#include "minigraph/error.h"

namespace mg::cuda {

namespace {

constexpr std::size_t kSmallRounding = 512;       // cudaMalloc aligns to 256 anyway
constexpr std::size_t kLargeRounding = 1u << 20;  // coarse steps let large blocks serve again
constexpr std::size_t kLargeThreshold = 1u << 20;

std::size_t rounded_size(std::size_t bytes) {
  const std::size_t step = bytes < kLargeThreshold ? kSmallRounding : kLargeRounding;
  return (bytes + step - 1) / step * step;
}

}  // namespace

void* CachingAllocator::allocate(std::size_t bytes) {
  if (bytes == 0) return nullptr;
  const std::size_t size = rounded_size(bytes);
  std::lock_guard lock(mutex_);
  // The smallest pooled block that fits, unless it would waste more than half of itself.
  auto it = free_blocks_.lower_bound(size);
  void* ptr;
  if (it != free_blocks_.end() && it->first <= 2 * size) {
    ptr = it->second;
    free_blocks_.erase(it);
  } else {
    ptr = allocate_new(size);
  }
  stats_.in_use_bytes += block_sizes_.at(ptr);
  return ptr;
}

void* CachingAllocator::allocate_new(std::size_t size) {
  MG_CUDA_CHECK(cudaSetDevice(device_));
  void* ptr = nullptr;
  cudaError_t status = cudaMalloc(&ptr, size);
  if (status == cudaErrorMemoryAllocation && !free_blocks_.empty()) {
    cudaGetLastError();  // clear the failure; the retry decides
    release_cached_locked();
    status = cudaMalloc(&ptr, size);
  }
  if (status == cudaErrorMemoryAllocation) {
    cudaGetLastError();
    std::size_t free_bytes = 0, total_bytes = 0;
    cudaMemGetInfo(&free_bytes, &total_bytes);
    throw Error("cuda", "allocate",
                fmt::format("at most {} bytes (free on cuda:{} of {}; {} in use by minigraph)",
                            free_bytes, device_, total_bytes, stats_.in_use_bytes),
                fmt::format("a request for {} bytes: out of device memory", size));
  }
  check_cuda(status, "cudaMalloc(&ptr, size)", __FILE__, __LINE__);
  block_sizes_.emplace(ptr, size);
  stats_.reserved_bytes += size;
  ++stats_.device_allocations;
  return ptr;
}

void CachingAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mutex_);
  const std::size_t size = block_sizes_.at(ptr);
  stats_.in_use_bytes -= size;
  free_blocks_.emplace(size, ptr);
}

void CachingAllocator::release_cached() {
  std::lock_guard lock(mutex_);
  release_cached_locked();
}

void CachingAllocator::release_cached_locked() {
  MG_CUDA_CHECK(cudaSetDevice(device_));
  // A pooled block may still be read by queued kernels of its last owner.
  MG_CUDA_CHECK(cudaDeviceSynchronize());
  for (auto& [size, ptr] : free_blocks_) {
    MG_CUDA_CHECK(cudaFree(ptr));
    block_sizes_.erase(ptr);
    stats_.reserved_bytes -= size;
  }
  free_blocks_.clear();
}

MemoryStats CachingAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

}  // namespace mg::cuda
