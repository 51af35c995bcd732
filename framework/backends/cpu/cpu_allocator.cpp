// The CPU caching allocator and the mg::cpu memory statistics.
#include "cpu_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <optional>
#include <string>

#include "minigraph/error.h"

namespace mg {

namespace {

constexpr std::size_t kPage = 4096;
constexpr std::size_t kHugePage = std::size_t{2} << 20;
// A pooled block serves a request at most this much smaller (1/8 of the block is the most
// wasted), so blocks are reused across nearby shapes without hoarding large ones.
constexpr std::size_t kBestFitSlack = 8;

// Requests from here up are first compared with the memory the system can give now: with
// overcommit, malloc of more than that succeeds and the process is killed when it touches the
// pages, where an mg::Error could have said what was asked for.
constexpr std::size_t kCheckAvailableFrom = std::size_t{64} << 20;

std::size_t round_up(std::size_t n, std::size_t step) { return (n + step - 1) / step * step; }

// A "Key:   123 kB" line of /proc/meminfo, in bytes.
std::optional<std::size_t> meminfo_bytes(const std::string& key) {
  std::ifstream file("/proc/meminfo");
  std::string name, unit;
  std::size_t kib = 0;
  while (file >> name >> kib) {
    std::getline(file, unit);
    if (name == key + ":") return kib * 1024;
  }
  return std::nullopt;
}

std::optional<std::size_t> file_number(const char* path) {
  std::ifstream file(path);
  std::size_t value = 0;
  if (file >> value) return value;
  return std::nullopt;  // missing, or "max" (no limit)
}

// What a new allocation may take without the kernel's OOM killer stepping in: MemAvailable
// plus free swap, and no more than the cgroup (v2) limit leaves; nullopt where unknown.
std::optional<std::size_t> memory_available() {
  auto available = meminfo_bytes("MemAvailable");
  if (!available) return std::nullopt;
  *available += meminfo_bytes("SwapFree").value_or(0);
  auto limit = file_number("/sys/fs/cgroup/memory.max");
  auto used = file_number("/sys/fs/cgroup/memory.current");
  if (limit && used) *available = std::min(*available, *limit > *used ? *limit - *used : 0);
  return available;
}

std::string gib(std::size_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

[[noreturn]] void out_of_memory(std::size_t size, std::optional<std::size_t> available) {
  throw Error("cpu", "allocate",
              available ? fmt::format("at most {} bytes ({}, the memory available now)",
                                      *available, gib(*available))
                        : std::string("memory the system can give"),
              fmt::format("a request for {} bytes ({}): out of memory", size, gib(size)));
}

}  // namespace

CpuAllocator& CpuAllocator::instance() {
  static auto* allocator = new CpuAllocator;
  return *allocator;
}

std::size_t CpuAllocator::block_size(std::size_t bytes) {
  if (bytes > std::numeric_limits<std::size_t>::max() - kHugePage) out_of_memory(bytes, {});
  if (bytes <= kSmallLimit) return round_up(bytes == 0 ? 1 : bytes, kAlignment);
  return round_up(bytes, kPage);
}

void* CpuAllocator::take_cached(std::size_t size) {
  if (size <= kSmallLimit) {
    auto& slot = small_free_[size / kAlignment];
    if (slot.empty()) return nullptr;
    void* ptr = slot.back();
    slot.pop_back();
    return ptr;
  }
  for (auto it = large_free_.lower_bound(size);
       it != large_free_.end() && it->first <= size + size / kBestFitSlack; ++it) {
    if (it->second.empty()) continue;
    void* ptr = it->second.back();
    it->second.pop_back();
    return ptr;
  }
  return nullptr;
}

void* CpuAllocator::allocate_new(std::size_t size) {
  const std::size_t alignment = size >= kHugePage ? kHugePage : kAlignment;
  if (size >= kCheckAvailableFrom) {
    auto available = memory_available();
    if (available && size > *available) {
      release_cached_locked();
      available = memory_available();
      if (available && size > *available) out_of_memory(size, available);
    }
  }
  void* ptr = std::aligned_alloc(alignment, size);
  if (ptr == nullptr) {
    release_cached_locked();
    ptr = std::aligned_alloc(alignment, size);
    if (ptr == nullptr) out_of_memory(size, memory_available());
  }
  // Advice only (where transparent huge pages are off it does nothing); the 2 MiB alignment
  // lets the kernel back the block with huge pages from its first byte.
  if (size >= kHugePage) madvise(ptr, size, MADV_HUGEPAGE);
  block_sizes_.emplace(ptr, size);
  ++stats_.system_allocations;
  stats_.reserved_bytes += size;
  return ptr;
}

void CpuAllocator::note_in_use(std::size_t size) {
  stats_.in_use_bytes += size;
  stats_.peak_in_use_bytes = std::max(stats_.peak_in_use_bytes, stats_.in_use_bytes);
  stats_.peak_reserved_bytes = std::max(stats_.peak_reserved_bytes, stats_.reserved_bytes);
}

void* CpuAllocator::allocate(std::size_t bytes) {
  const std::size_t size = block_size(bytes);
  std::lock_guard lock(mutex_);
  void* ptr = take_cached(size);
  if (ptr == nullptr) ptr = allocate_new(size);
  note_in_use(block_sizes_.at(ptr));
  return ptr;
}

void CpuAllocator::deallocate(void* ptr) {
  if (ptr == nullptr) return;
  std::lock_guard lock(mutex_);
  const std::size_t size = block_sizes_.at(ptr);
  stats_.in_use_bytes -= size;
  if (size <= kSmallLimit) {
    small_free_[size / kAlignment].push_back(ptr);
  } else {
    large_free_[size].push_back(ptr);
  }
}

void CpuAllocator::release_cached() {
  std::lock_guard lock(mutex_);
  release_cached_locked();
}

void CpuAllocator::release_cached_locked() {
  auto release = [&](std::vector<void*>& blocks) {
    for (void* ptr : blocks) {
      stats_.reserved_bytes -= block_sizes_.at(ptr);
      block_sizes_.erase(ptr);
      std::free(ptr);
    }
    blocks.clear();
  };
  for (auto& slot : small_free_) release(slot);
  for (auto& [size, blocks] : large_free_) release(blocks);
}

cpu::MemoryStats CpuAllocator::stats() const {
  std::lock_guard lock(mutex_);
  return stats_;
}

void CpuAllocator::reset_peaks() {
  std::lock_guard lock(mutex_);
  stats_.peak_in_use_bytes = stats_.in_use_bytes;
  stats_.peak_reserved_bytes = stats_.reserved_bytes;
}

namespace cpu {
MemoryStats memory_stats() { return CpuAllocator::instance().stats(); }
void reset_peak_memory_stats() { CpuAllocator::instance().reset_peaks(); }
void empty_cache() { CpuAllocator::instance().release_cached(); }
}  // namespace cpu

}  // namespace mg
