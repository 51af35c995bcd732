// Device memory for one GPU, reused instead of returned: a freed block waits in a pool keyed by
// its size and serves the next request that fits, so a training step in steady state never
// calls cudaMalloc or cudaFree (both synchronise the whole device).
//
// Reuse needs no events because every kernel and copy of a device runs on its one stream: work
// queued on a block before it was freed runs before any work queued by its next owner.
#pragma once

#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>

#include "minigraph/cuda.h"

namespace mg::cuda {

class CachingAllocator {
 public:
  explicit CachingAllocator(int device) : device_(device) {}
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // nullptr for zero bytes. Throws mg::Error when the device is out of memory even after the
  // cached blocks were released.
  void* allocate(std::size_t bytes);
  void deallocate(void* ptr);  // back to the pool; nullptr is ignored
  void release_cached();       // cudaFree every pooled block
  MemoryStats stats() const;

 private:
  void* allocate_new(std::size_t bytes);  // cudaMalloc, releasing the pool once on failure
  void release_cached_locked();

  int device_;
  mutable std::mutex mutex_;
  std::multimap<std::size_t, void*> free_blocks_;       // size -> pooled block
  std::unordered_map<void*, std::size_t> block_sizes_;  // every block this allocator holds
  MemoryStats stats_;
};

}  // namespace mg::cuda
