// The CUDA backend: per device a caching allocator, one stream that every kernel, copy and
// cuBLAS call of that device runs on (so work is ordered without events), and a cuBLAS handle.
// Kernels live with their ops (ops/<op>/<op>_cuda.*); this header is what they build on.
#pragma once

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "caching_allocator.h"
#include "minigraph/backend.h"
#include "minigraph/tensor.h"

namespace mg {

// Visible CUDA devices; 0 (never an exception) without a driver or a GPU.
int cuda_device_count();
std::unique_ptr<Backend> make_cuda_backend(int index);

class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int index);
  // Leaves the stream, handle and pooled memory to the driver: backends live until process
  // exit, when the CUDA runtime may already be torn down and freeing into it can crash.
  ~CudaBackend() override = default;

  Device device() const override { return Device::cuda(index_); }
  void* allocate(std::size_t bytes) override;
  void deallocate(void* ptr, std::size_t bytes) override;
  void copy_from_host(void* dst, const void* host_src, std::size_t bytes) override;
  void copy_to_host(void* host_dst, const void* src, std::size_t bytes) override;  // waits
  void copy(void* dst, const void* src, std::size_t bytes) override;
  void fill_zero(void* ptr, std::size_t bytes) override;
  void copy_strided(const StridedCopy& copy) override;
  void synchronize() override;

  cudaStream_t stream() const { return stream_; }
  cublasHandle_t cublas() const { return cublas_; }  // bound to stream()
  cuda::CachingAllocator& allocator() { return allocator_; }

 private:
  int index_;
  cuda::CachingAllocator allocator_;
  cudaStream_t stream_ = nullptr;
  cublasHandle_t cublas_ = nullptr;
};

namespace cuda {

// The backend of a CUDA device, with that device made current for kernel launches: what a
// kernel adapter calls first.
CudaBackend& activate(Device device);

// Scratch device memory from the backend's pool, returned to it when the buffer goes out of
// scope. Returning it while kernels that use it are still queued is safe: its next owner's
// work runs on the same stream, after them.
class DeviceBuffer {
 public:
  DeviceBuffer(CudaBackend& backend, std::size_t bytes)
      : backend_(backend), bytes_(bytes), data_(backend.allocate(bytes)) {}
  ~DeviceBuffer() { backend_.deallocate(data_, bytes_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  template <typename T>
  T* as() const {
    return static_cast<T*>(data_);
  }
  void* data() const { return data_; }
  std::size_t bytes() const { return bytes_; }

 private:
  CudaBackend& backend_;
  std::size_t bytes_;
  void* data_;
};

}  // namespace cuda
}  // namespace mg
