// The backends present in this build, one per device, made on first use.
#include "minigraph/backend.h"

#include <map>
#include <mutex>

#include "../backends/cpu/cpu_backend.h"
#include "minigraph/error.h"
#ifdef MG_WITH_CUDA
#include "../backends/cuda/cuda_backend.h"
#endif

namespace mg {

namespace {
#ifdef MG_WITH_CUDA
constexpr const char* kCudaNote = "";
#else
constexpr const char* kCudaNote = "; this build has no CUDA backend";
#endif
}  // namespace

bool backend_built(DeviceKind kind) {
#ifdef MG_WITH_CUDA
  constexpr bool kCudaBuilt = true;
#else
  constexpr bool kCudaBuilt = false;
#endif
  return kind == DeviceKind::cpu || kCudaBuilt;
}

int device_count(DeviceKind kind) {
  if (kind == DeviceKind::cpu) return 1;
#ifdef MG_WITH_CUDA
  return cuda_device_count();
#else
  return 0;
#endif
}

bool device_available(Device device) {
  return device.index >= 0 && device.index < device_count(device.kind);
}

Backend& backend_for(Device device) {
  if (device.is_cpu()) {
    static CpuBackend cpu;
    return cpu;
  }
  MG_CHECK(device_available(device), "backend", "device",
           fmt::format("an available device ({} CUDA device(s) visible{})",
                       device_count(DeviceKind::cuda), kCudaNote),
           "{}", device.str());
#ifdef MG_WITH_CUDA
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<Backend>> backends;
  std::lock_guard lock(mutex);
  auto& slot = backends[device.index];
  if (!slot) slot = make_cuda_backend(device.index);
  return *slot;
#else
  throw Error("backend", "device", "cpu", device.str());
#endif
}

}  // namespace mg
