// The backend interface: memory and copies only. Ops bring their own kernels per device
// (see op.h), so a backend never grows with the number of ops.
#pragma once

#include <cstddef>
#include <memory>

#include "minigraph/dtype.h"

namespace mg {

class Backend {
 public:
  virtual ~Backend() = default;
  virtual Device device() const = 0;
  virtual void* allocate(std::size_t bytes) = 0;
  virtual void deallocate(void* ptr, std::size_t bytes) = 0;
  virtual void copy_from_host(void* dst, const void* host_src, std::size_t bytes) = 0;
  virtual void copy_to_host(void* host_dst, const void* src, std::size_t bytes) = 0;
  virtual void copy(void* dst, const void* src, std::size_t bytes) = 0;  // same device
  virtual void fill_zero(void* ptr, std::size_t bytes) = 0;
  virtual void synchronize() = 0;
};

// The backend of a device; throws mg::Error when that device is not available.
Backend& backend_for(Device device);
bool device_available(Device device);
// Whether this build has a backend for that kind of device (CUDA: built with MINIGRAPH_CUDA),
// whether or not such a device is present.
bool backend_built(DeviceKind kind);
int device_count(DeviceKind kind);  // 1 for the CPU; visible GPUs for CUDA (0 without one)

}  // namespace mg
