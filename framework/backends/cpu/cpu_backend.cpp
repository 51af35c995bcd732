// The CPU backend: memory from the caching allocator; large copies and fills split across the
// threads of the thread setting (one thread streams well below the memory bandwidth).
#include "cpu_backend.h"

#include <algorithm>
#include <cstring>
#include <vector>

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

namespace {

// Rows of the last axis, `width` elements each: copies element by element in the element's own
// type, so the compiler emits one load and one store per element.
template <typename Word>
void copy_row(char* dst, const char* src, std::int64_t width, std::int64_t dst_step,
              std::int64_t src_step) {
  auto* d = reinterpret_cast<Word*>(dst);
  const auto* s = reinterpret_cast<const Word*>(src);
  for (std::int64_t i = 0; i < width; ++i) d[i * dst_step] = s[i * src_step];
}

void copy_row_any(const StridedCopy& c, char* dst, const char* src) {
  const std::int64_t width = c.shape.back(), dst_step = c.dst_strides.back(),
                     src_step = c.src_strides.back();
  const std::size_t size = c.element_size;
  if (dst_step == 1 && src_step == 1) {
    std::memcpy(dst, src, static_cast<std::size_t>(width) * size);
    return;
  }
  switch (size) {
    case 1:
      return copy_row<std::uint8_t>(dst, src, width, dst_step, src_step);
    case 2:
      return copy_row<std::uint16_t>(dst, src, width, dst_step, src_step);
    case 4:
      return copy_row<std::uint32_t>(dst, src, width, dst_step, src_step);
    case 8:
      return copy_row<std::uint64_t>(dst, src, width, dst_step, src_step);
    default:
      for (std::int64_t i = 0; i < width; ++i)
        std::memcpy(dst + i * dst_step * size, src + i * src_step * size, size);
  }
}

}  // namespace

// The rows (every axis but the last) cut into one range per thread; each range finds its first
// row's offsets by unravelling its index, then steps like an odometer.
void CpuBackend::copy_strided(const StridedCopy& c) {
  const std::size_t rank = c.shape.size();
  if (rank == 0) {
    std::memcpy(c.dst, c.src, c.element_size);
    return;
  }
  std::int64_t rows = 1;
  for (std::size_t axis = 0; axis + 1 < rank; ++axis) rows *= c.shape[axis];
  const auto size = static_cast<std::int64_t>(c.element_size);
  const int parts = threads_for(rows * c.shape.back());
  parallel_for(parts, [&](int part) {
    const Range r = part_range(rows, parts, part);
    if (r.begin == r.end) return;
    std::vector<std::int64_t> index(rank, 0);
    std::int64_t dst = 0, src = 0;
    for (std::int64_t axis = static_cast<std::int64_t>(rank) - 2, rest = r.begin; axis >= 0;
         --axis) {
      index[axis] = rest % c.shape[axis];
      rest /= c.shape[axis];
      dst += index[axis] * c.dst_strides[axis];
      src += index[axis] * c.src_strides[axis];
    }
    for (std::int64_t row = r.begin; row < r.end; ++row) {
      copy_row_any(c, static_cast<char*>(c.dst) + dst * size,
                   static_cast<const char*>(c.src) + src * size);
      for (std::int64_t axis = static_cast<std::int64_t>(rank) - 2; axis >= 0; --axis) {
        dst += c.dst_strides[axis];
        src += c.src_strides[axis];
        if (++index[axis] < c.shape[axis]) break;
        dst -= c.dst_strides[axis] * c.shape[axis];
        src -= c.src_strides[axis] * c.shape[axis];
        index[axis] = 0;
      }
    }
  });
}

}  // namespace mg
