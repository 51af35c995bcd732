// The CPU caching allocator and the mg::cpu memory statistics.
#include "cpu_allocator.h"

#include <sys/mman.h>
#include <sys/resource.h>

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
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

// "Key:   123 kB" from a /proc file, in bytes; -1 when absent.
std::int64_t proc_kib_field(const char* file, const std::string& key) {
  std::ifstream in(file);
  for (std::string line; std::getline(in, line);) {
    if (line.rfind(key + ":", 0) != 0) continue;
    std::istringstream fields(line.substr(key.size() + 1));
    std::int64_t kib = -1;
    fields >> kib;
    return kib < 0 ? -1 : kib * 1024;
  }
  return -1;
}

// A number in a cgroup file ("max" and absence: -1).
std::int64_t cgroup_number(const std::string& path) {
  std::ifstream in(path);
  std::string word;
  if (!(in >> word) || word == "max") return -1;
  std::int64_t value = -1;
  std::from_chars(word.data(), word.data() + word.size(), value);
  return value;
}

// The cgroup v2 directory of this process ("0::/some/path" in /proc/self/cgroup).
std::string cgroup_dir() {
  std::ifstream in("/proc/self/cgroup");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("0::", 0) == 0) return "/sys/fs/cgroup" + line.substr(3);
  }
  return "";
}

std::string gib(std::size_t bytes) {
  return fmt::format("{:.2f} GiB", static_cast<double>(bytes) / (1024.0 * 1024 * 1024));
}

[[noreturn]] void out_of_memory(std::size_t size, const cpu::AvailableMemory& available) {
  throw Error(
      "cpu", "allocate",
      available.known
          ? fmt::format("at most {} bytes ({}, the memory available now: {})", available.bytes,
                        gib(static_cast<std::size_t>(available.bytes)), available.source)
          : std::string("memory the system can give"),
      fmt::format("a request for {} bytes ({}): out of memory", size, gib(size)));
}

bool fits(std::size_t size, const cpu::AvailableMemory& available) {
  return !available.known || size <= static_cast<std::size_t>(available.bytes);
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
  if (size >= kCheckAvailableFrom && !fits(size, cpu::available_memory())) {
    release_cached_locked();
    if (auto available = cpu::available_memory(); !fits(size, available)) {
      out_of_memory(size, available);
    }
  }
  // posix_memalign, not aligned_alloc: C11 leaves aligned_alloc undefined for a size that is
  // not a multiple of the alignment (a 2 MiB-aligned block is rounded to 4 KiB pages only).
  void* ptr = nullptr;
  if (posix_memalign(&ptr, alignment, size) != 0) {
    release_cached_locked();
    if (posix_memalign(&ptr, alignment, size) != 0) out_of_memory(size, cpu::available_memory());
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
AvailableMemory available_memory() {
  AvailableMemory out;
  auto consider = [&](std::int64_t bytes, const char* source) {
    if (bytes < 0) return;
    bytes = std::max<std::int64_t>(bytes, 0);
    if (!out.known || bytes < out.bytes) out = {bytes, source, true};
  };
  consider(proc_kib_field("/proc/meminfo", "MemAvailable"), "MemAvailable");
  rlimit limit{};
  if (getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    const std::int64_t mapped =
        std::max<std::int64_t>(proc_kib_field("/proc/self/status", "VmSize"), 0);
    const auto cap = static_cast<std::int64_t>(
        std::min<rlim_t>(limit.rlim_cur, std::numeric_limits<std::int64_t>::max()));
    consider(cap - mapped, "ulimit -v");
  }
  if (const std::string dir = cgroup_dir(); !dir.empty()) {
    const std::int64_t max = cgroup_number(dir + "/memory.max");
    const std::int64_t current = cgroup_number(dir + "/memory.current");
    if (max >= 0 && current >= 0) consider(max - current, "cgroup memory.max");
  }
  return out;
}

MemoryStats memory_stats() { return CpuAllocator::instance().stats(); }
void reset_peak_memory_stats() { CpuAllocator::instance().reset_peaks(); }
void empty_cache() { CpuAllocator::instance().release_cached(); }
}  // namespace cpu

}  // namespace mg
