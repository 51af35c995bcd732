// The CPU backend: memory from the caching allocator; large copies and fills split across the
// threads of the thread setting (one thread streams well below the memory bandwidth).
#include "cpu_backend.h"

#include <cstring>

#include "cpu_allocator.h"
#include "minigraph/threads.h"

namespace mg {

namespace {

// Calls fn(offset, length) on `threads` contiguous byte ranges of [0, bytes) in parallel.
template <typename Fn>
void for_each_byte_range(std::size_t bytes, Fn&& fn) {
  const int threads = threads_for(static_cast<std::int64_t>(bytes / sizeof(float)));
  if (threads == 1) {
    fn(std::size_t{0}, bytes);
    return;
  }
  constexpr std::size_t kLine = 64;  // ranges start on cache lines
  const std::size_t chunk = (bytes / threads + kLine - 1) / kLine * kLine;
#pragma omp parallel for num_threads(threads) schedule(static)
  for (int t = 0; t < threads; ++t) {
    const std::size_t begin = std::min(bytes, t * chunk);
    fn(begin, std::min(bytes, begin + chunk) - begin);
  }
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
    if (length) std::memcpy(static_cast<char*>(dst) + offset, static_cast<const char*>(src) + offset, length);
  });
}
void CpuBackend::fill_zero(void* ptr, std::size_t bytes) {
  for_each_byte_range(bytes, [&](std::size_t offset, std::size_t length) {
    if (length) std::memset(static_cast<char*>(ptr) + offset, 0, length);
  });
}

}  // namespace mg
