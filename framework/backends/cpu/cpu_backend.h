// The CPU backend: 64-byte aligned host memory (so Eigen and BLAS see aligned rows) from a
// caching allocator (cpu_allocator.h).
#pragma once

#include "minigraph/backend.h"

namespace mg {

class CpuBackend final : public Backend {
 public:
  Device device() const override { return Device::cpu(); }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  void copy_from_host(void* dst, const void* src, std::size_t bytes) override;
  void copy_to_host(void* dst, const void* src, std::size_t bytes) override;
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void fill_zero(void* ptr, std::size_t bytes) override;
  void copy_strided(const StridedCopy& copy) override;
  void synchronize() override {}
};

}  // namespace mg
