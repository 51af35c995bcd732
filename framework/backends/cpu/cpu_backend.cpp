// The CPU backend: memory from the caching allocator; large copies and fills split across the
// threads of the thread setting (one thread streams well below the memory bandwidth).
#include "cpu_backend.h"

#include <algorithm>
#include <cstring>

#include "cpu_allocator.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// Calls fn(offset, length) on contiguous byte ranges of [0, bytes), one per thread.
template <typename Fn>
void for_each_byte_range(std::size_t bytes, Fn&& fn) {
  constexpr std::int64_t kLine = 64;  // ranges start on cache lines
  const auto lines = static_cast<std::int64_t>((bytes + kLine - 1) / kLine);
  const int parts = threads_for(static_cast<std::int64_t>(bytes / sizeof(float)));
  parallel_for(parts, [&](int part) {
    const Range r = part_range(lines, parts, part);
    const std::size_t begin = std::min<std::size_t>(bytes, r.begin * kLine);
    fn(begin, std::min<std::size_t>(bytes, r.end * kLine) - begin);
  });
}

}  // namespace

void* CpuBackend::allocate(std::size_t bytes) { return CpuAllocator::instance().allocate(bytes); }

void CpuBackend::deallocate(void* ptr, std::size_t) { CpuAllocator::instance().deallocate(ptr); }

void CpuBackend::copy_from_host(void* dst, const void* src, std::size_t bytes) {
  copy(dst, src, bytes);
}
void CpuBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  copy(dst, src, bytes);
}
void CpuBackend::copy(void* dst, const void* src, std::size_t bytes) {
  for_each_byte_range(bytes, [&](std::size_t offset, std::size_t length) {
    if (length)
      std::memcpy(static_cast<char*>(dst) + offset, static_cast<const char*>(src) + offset, length);
  });
}
void CpuBackend::fill_zero(void* ptr, std::size_t bytes) {
  for_each_byte_range(bytes, [&](std::size_t offset, std::size_t length) {
    if (length) std::memset(static_cast<char*>(ptr) + offset, 0, length);
  });
}

}  // namespace mg
