// The backend interface: memory and copies only. Ops bring their own kernels per device
// (see op.h), so a backend never grows with the number of ops.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "minigraph/dtype.h"
#include "minigraph/error.h"

namespace mg {

// A copy between two layouts of `shape` on one device: the element at each index moves from
// src + src_strides·index to dst + dst_strides·index (strides in elements of `element_size`
// bytes). The core hands a backend merged axes (no size-1 axis, neighbours merged where both
// layouts allow), so a transpose is two axes however many the tensor has.
struct StridedCopy {
  void* dst = nullptr;
  const void* src = nullptr;
  std::size_t element_size = 0;
  Shape shape, dst_strides, src_strides;
};

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
  virtual void copy_strided(const StridedCopy& copy) = 0;  // same device
  virtual void synchronize() = 0;
};

// The backend of a device; throws mg::Error when that device is not available.
Backend& backend_for(Device device);
bool device_available(Device device);
// Whether this build has a backend for that kind of device (CUDA: built with MINIGRAPH_CUDA),
// whether or not such a device is present.
bool backend_built(DeviceKind kind);
int device_count(DeviceKind kind);  // 1 for the CPU; visible GPUs for CUDA (0 without one)

// The device shared by `count` inputs of `op`, whose i-th device is device_of(i) and name
// names[i]: throws mg::Error naming the first input on another device ("add: argument 'b':
// expected device cpu (as 'a'), got cuda:0"). apply_op runs it before any shape rule or
// kernel; it takes devices rather than tensors so that it is tested without a second device.
template <typename DeviceOf>
Device common_device(const std::string& op, const std::vector<std::string>& names,
                     std::size_t count, DeviceOf&& device_of) {
  const Device device = count == 0 ? Device::cpu() : device_of(std::size_t{0});
  for (std::size_t i = 1; i < count; ++i) {
    const Device other = device_of(i);
    MG_CHECK(other == device, op, names[i],
             fmt::format("device {} (as '{}')", device.str(), names[0]), "{}", other.str());
  }
  return device;
}

}  // namespace mg
