// The CPU backend's caching allocator: freed blocks wait in a pool keyed by their size and
// serve the next request of that size, so a step in steady state causes no page faults and no
// system calls. Blocks are 64-byte aligned (so Eigen and BLAS see aligned rows); blocks of
// 2 MiB and more are asked to be backed by transparent huge pages (fewer faults when fresh,
// fewer TLB misses in the gathers of large tables).
#pragma once

#include <array>
#include <cstddef>
#include <map>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "minigraph/cpu.h"

namespace mg {

class CpuAllocator {
 public:
  // The process's allocator; never destroyed, since tensors may be freed during static
  // destruction.
  static CpuAllocator& instance();

  // Throws mg::Error (op "cpu") naming the bytes asked for when the system cannot give them.
  void* allocate(std::size_t bytes);
  void deallocate(void* ptr);
  void release_cached();
  cpu::MemoryStats stats() const;
  void reset_peaks();

 private:
  CpuAllocator() = default;
  static std::size_t block_size(std::size_t bytes);  // the size class a request is served from
  void* take_cached(std::size_t size);  // a pooled block of at least `size`, or nullptr
  // The helpers below run with mutex_ held.
  void* allocate_new(std::size_t size);  // from the system, releasing the pool once on failure
  void release_cached_locked();
  void note_in_use(std::size_t size);

  // Sizes up to kSmallLimit come in 64-byte steps and have a slot each; larger ones are
  // rounded to pages and found by best fit among the pooled sizes.
  static constexpr std::size_t kAlignment = 64;
  static constexpr std::size_t kSmallLimit = 4096;

  mutable std::mutex mutex_;
  std::array<std::vector<void*>, kSmallLimit / kAlignment + 1> small_free_;  // by size / 64
  std::map<std::size_t, std::vector<void*>> large_free_;  // by size; entries stay when empty
  std::unordered_map<void*, std::size_t> block_sizes_;    // every block held, in use or pooled
  cpu::MemoryStats stats_;
};

}  // namespace mg
