// The CUDA backend's memory, copies and stream (see cuda_backend.h), the conversion of CUDA
// errors into mg::Error, and the public settings of minigraph/cuda.h.
#include "cuda_backend.h"

#include <atomic>

#include "cublas_gemm.h"
#include "cuda_check.h"
#include "minigraph/cuda.h"
#include "minigraph/error.h"
#include "strided_copy.cuh"

namespace mg {

namespace cuda {

void throw_cuda_error(cudaError_t status, const char* call, const char* file, int line) {
  cudaGetLastError();  // a non-sticky error must not resurface at the next check
  throw Error("cuda", call, "cudaSuccess",
              fmt::format("{} ({}): {} [{}:{}]", cudaGetErrorName(status), static_cast<int>(status),
                          cudaGetErrorString(status), file, line));
}

void throw_cublas_error(cublasStatus_t status, const char* call, const char* file, int line) {
  throw Error("cublas", call, "CUBLAS_STATUS_SUCCESS",
              fmt::format("{} ({}): {} [{}:{}]", cublasGetStatusName(status),
                          static_cast<int>(status), cublasGetStatusString(status), file, line));
}

CudaBackend& activate(Device device) {
  auto& backend = static_cast<CudaBackend&>(backend_for(device));
  MG_CUDA_CHECK(cudaSetDevice(device.index));
  return backend;
}

namespace {
std::atomic<bool> g_allow_tf32{false};
}  // namespace

void set_allow_tf32(bool allow) { g_allow_tf32 = allow; }
bool allow_tf32() { return g_allow_tf32; }

MemoryStats memory_stats(int device) { return activate(Device::cuda(device)).allocator().stats(); }
void empty_cache(int device) { activate(Device::cuda(device)).allocator().release_cached(); }

}  // namespace cuda

int cuda_device_count() {
  // Counted once: the visible devices cannot change within a process.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) {
      cudaGetLastError();  // no driver or no GPU: not an error, just no CUDA devices
      return 0;
    }
    return n;
  }();
  return count;
}

std::unique_ptr<Backend> make_cuda_backend(int index) {
  return std::make_unique<CudaBackend>(index);
}

CudaBackend::CudaBackend(int index) : index_(index), allocator_(index) {
  MG_CUDA_CHECK(cudaSetDevice(index_));
  // Non-blocking: the legacy default stream (used by other libraries) does not serialise ours.
  MG_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
  MG_CUBLAS_CHECK(cublasCreate(&cublas_));
  MG_CUBLAS_CHECK(cublasSetStream(cublas_, stream_));
}

void* CudaBackend::allocate(std::size_t bytes) { return allocator_.allocate(bytes); }

void CudaBackend::deallocate(void* ptr, std::size_t) { allocator_.deallocate(ptr); }

void CudaBackend::copy_from_host(void* dst, const void* host_src, std::size_t bytes) {
  if (bytes == 0) return;
  MG_CUDA_CHECK(cudaSetDevice(index_));
  // From pageable memory this returns once the source was staged, so the caller may reuse it.
  MG_CUDA_CHECK(cudaMemcpyAsync(dst, host_src, bytes, cudaMemcpyHostToDevice, stream_));
}

void CudaBackend::copy_to_host(void* host_dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  MG_CUDA_CHECK(cudaSetDevice(index_));
  MG_CUDA_CHECK(cudaMemcpyAsync(host_dst, src, bytes, cudaMemcpyDeviceToHost, stream_));
  MG_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

void CudaBackend::copy(void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  MG_CUDA_CHECK(cudaSetDevice(index_));
  MG_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
}

void CudaBackend::fill_zero(void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  MG_CUDA_CHECK(cudaSetDevice(index_));
  MG_CUDA_CHECK(cudaMemsetAsync(ptr, 0, bytes, stream_));
}

void CudaBackend::copy_strided(const StridedCopy& copy) {
  const auto rank = static_cast<int>(copy.shape.size());
  MG_CHECK(rank <= cuda::kMaxCopyAxes, "copy_strided", "layout",
           fmt::format("at most {} axes after merging (on CUDA)", cuda::kMaxCopyAxes), "{} axes",
           rank);
  MG_CHECK(copy.element_size == 1 || copy.element_size == 2 || copy.element_size == 4 ||
               copy.element_size == 8,
           "copy_strided", "element_size", "1, 2, 4 or 8 bytes", "{}", copy.element_size);
  cuda::StridedCopyLayout layout{};
  layout.rank = rank;
  layout.count = 1;
  for (int axis = 0; axis < rank; ++axis) {
    layout.size[axis] = copy.shape[axis];
    layout.dst_stride[axis] = copy.dst_strides[axis];
    layout.src_stride[axis] = copy.src_strides[axis];
    layout.count *= copy.shape[axis];
  }
  MG_CUDA_CHECK(cudaSetDevice(index_));
  cuda::strided_copy(copy.dst, copy.src, static_cast<int>(copy.element_size), layout, stream_);
}

void CudaBackend::synchronize() {
  MG_CUDA_CHECK(cudaSetDevice(index_));
  MG_CUDA_CHECK(cudaStreamSynchronize(stream_));
}

}  // namespace mg
