// Statistics of the CPU backend's caching allocator. Tensor memory freed on the CPU is kept
// and handed to the next tensor of the same size, because touching fresh memory costs a page
// fault per 4 KiB (about twelve times the cost of rewriting mapped memory): a training step in
// steady state takes no memory from the system at all. Threads: see minigraph/threads.h.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace mg::cpu {

struct MemoryStats {
  std::size_t system_allocations = 0;   // blocks taken from the system so far: flat in steady state
  std::size_t reserved_bytes = 0;       // held from the system: in use plus cached
  std::size_t in_use_bytes = 0;         // held by live tensors
  std::size_t peak_reserved_bytes = 0;  // since the start or the last reset_peak_memory_stats()
  std::size_t peak_in_use_bytes = 0;
};

MemoryStats memory_stats();
// Starts the peaks afresh at the current values, to measure the peak of one piece of work.
void reset_peak_memory_stats();
// Returns the cached (unused) blocks to the system.
void empty_cache();

// Bytes this process can still get from the system: MemAvailable from /proc/meminfo, less
// where ulimit -v (RLIMIT_AS) or the cgroup's memory.max allows less. The allocator refuses
// larger requests with an mg::Error (with overcommit, malloc would succeed and the process be
// killed on touching the pages); programs check their plans against it up front.
struct AvailableMemory {
  std::int64_t bytes = 0;
  std::string source;  // which bound it is: "MemAvailable", "ulimit -v", "cgroup memory.max"
  bool known = false;  // false where none can be read: then nothing is refused
};
AvailableMemory available_memory();

}  // namespace mg::cpu
