#include "cpu_backend.h"

#include <cstdlib>
#include <cstring>
#include <new>

namespace mg {

namespace {
constexpr std::size_t kAlignment = 64;
}

void* CpuBackend::allocate(std::size_t bytes) {
  std::size_t rounded = (bytes + kAlignment - 1) / kAlignment * kAlignment;
  void* ptr = std::aligned_alloc(kAlignment, rounded == 0 ? kAlignment : rounded);
  if (ptr == nullptr) throw std::bad_alloc();
  return ptr;
}

void CpuBackend::deallocate(void* ptr, std::size_t) { std::free(ptr); }

void CpuBackend::copy_from_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy_to_host(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}
void CpuBackend::fill_zero(void* ptr, std::size_t bytes) {
  if (bytes) std::memset(ptr, 0, bytes);
}

}  // namespace mg
