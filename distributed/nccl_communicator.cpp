// The NCCL communicator: one ncclComm per process over the ranks of a bootstrap communicator,
// collectives on a stream of their own, ordered with the device's compute stream by events.
#include "minigraph/distributed/nccl_communicator.h"

#include <cuda_runtime_api.h>
#include <fmt/format.h>
#include <nccl.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backends/cuda/cuda_backend.h"
#include "minigraph/error.h"

namespace mg::distributed {

namespace {

void nccl_check(ncclResult_t rc, const char* call) {
  MG_CHECK(rc == ncclSuccess, "nccl", call, "success", "{}", ncclGetErrorString(rc));
}

void cuda_check(cudaError_t rc, const char* call) {
  MG_CHECK(rc == cudaSuccess, "nccl", call, "success", "{}", cudaGetErrorString(rc));
}

ncclDataType_t nccl_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return ncclFloat32;
    case DType::f64:
      return ncclFloat64;
    case DType::i32:
      return ncclInt32;
    case DType::i64:
      return ncclInt64;
    case DType::boolean:  // masks are never reduced
      break;
  }
  throw Error("nccl", "dtype", "f32, f64, i32 or i64", std::string(dtype_name(dtype)));
}

// Done on the communicator's stream: wait() orders the compute stream after it.
class NcclWork final : public Work {
 public:
  NcclWork(cudaStream_t compute, cudaEvent_t done, Tensor keep)
      : compute_(compute), done_(done), keep_(std::move(keep)) {}
  ~NcclWork() override { cudaEventDestroy(done_); }
  void wait() override {
    cuda_check(cudaStreamWaitEvent(compute_, done_, 0), "cudaStreamWaitEvent");
  }

 private:
  cudaStream_t compute_;
  cudaEvent_t done_;
  Tensor keep_;  // the tensor lives until the work is gone (its memory is reused only after)
};

class NcclCommunicator final : public Communicator {
 public:
  NcclCommunicator(Communicator& bootstrap, Device device, const CommunicatorOptions& options)
      : device_(device),
        options_(options),
        rank_(bootstrap.rank()),
        world_(bootstrap.world_size()) {
    MG_CHECK(device.kind == DeviceKind::cuda && device.index < cuda_device_count(),
             "nccl_communicator", "device",
             fmt::format("a visible GPU (cuda:0 .. cuda:{})", cuda_device_count() - 1), "{}",
             device.str());
    backend_ = &cuda::activate(device);
    ncclUniqueId id{};
    if (rank_ == 0) nccl_check(ncclGetUniqueId(&id), "ncclGetUniqueId");
    std::string bytes(reinterpret_cast<const char*>(&id), sizeof id);
    bytes = broadcast_bytes(bootstrap, bytes, 0);
    std::memcpy(&id, bytes.data(), sizeof id);
    nccl_check(ncclCommInitRank(&comm_, world_, id, rank_), "ncclCommInitRank");
    cuda_check(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking), "cudaStreamCreate");
  }
  ~NcclCommunicator() override {
    if (aborted_) return;
    cuda::activate(device_);
    cudaStreamSynchronize(stream_);
    ncclCommDestroy(comm_);
    cudaStreamDestroy(stream_);
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "nccl"; }
  Device device() const override { return device_; }

  void barrier() override {
    Tensor one = Tensor::zeros({1}, DType::i32, device_);
    all_reduce(one);
    cudaEvent_t done = record_on(backend_->stream());
    // Poll, so that a rank that never comes is a timeout, not a host blocked forever.
    const auto start = std::chrono::steady_clock::now();
    while (true) {
      const cudaError_t state = cudaEventQuery(done);
      if (state == cudaSuccess) break;
      if (state != cudaErrorNotReady) {
        cudaEventDestroy(done);
        cuda_check(state, "cudaEventQuery");
      }
      ncclResult_t async = ncclSuccess;
      ncclCommGetAsyncError(comm_, &async);
      const double waited =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (async != ncclSuccess || (options_.timeout_s > 0 && waited > options_.timeout_s)) {
        cudaEventDestroy(done);
        ncclCommAbort(comm_);
        aborted_ = true;
        throw Error(
            "barrier", "ranks",
            fmt::format("all {} ranks within {} s (the timeout)", world_, options_.timeout_s),
            async != ncclSuccess ? fmt::format("NCCL error: {}", ncclGetErrorString(async))
                                 : "no answer: a rank died, stalled or called another collective");
      }
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    cudaEventDestroy(done);
  }

  [[noreturn]] void abort(int exit_code) override {
    if (!aborted_) ncclCommAbort(comm_);
    aborted_ = true;
    std::_Exit(exit_code);
  }

 private:
  cudaEvent_t record_on(cudaStream_t stream) {
    cudaEvent_t event = nullptr;
    cuda_check(cudaEventCreateWithFlags(&event, cudaEventDisableTiming), "cudaEventCreate");
    cuda_check(cudaEventRecord(event, stream), "cudaEventRecord");
    return event;
  }

  // Runs `call` on the NCCL stream after the compute stream's queued work.
  template <typename Call>
  std::shared_ptr<Work> enqueue(const Tensor& tensor, Call&& call) {
    MG_CHECK(!aborted_, "nccl", "communicator", "a live communicator",
             "one aborted after a timeout");
    cuda::activate(device_);
    cudaEvent_t ready = record_on(backend_->stream());
    const cudaError_t waited = cudaStreamWaitEvent(stream_, ready, 0);
    cudaEventDestroy(ready);
    cuda_check(waited, "cudaStreamWaitEvent");
    nccl_check(call(), "collective");
    return std::make_shared<NcclWork>(backend_->stream(), record_on(stream_), tensor);
  }

  std::shared_ptr<Work> all_reduce_checked(const Tensor& tensor, ReduceOp op) override {
    return enqueue(tensor, [&] {
      void* data = tensor.raw_data();
      return ncclAllReduce(data, data, static_cast<std::size_t>(tensor.numel()),
                           nccl_type(tensor.dtype()), op == ReduceOp::mean ? ncclAvg : ncclSum,
                           comm_, stream_);
    });
  }

  std::shared_ptr<Work> broadcast_checked(const Tensor& tensor, int root) override {
    return enqueue(tensor, [&] {
      void* data = tensor.raw_data();
      return ncclBroadcast(data, data, static_cast<std::size_t>(tensor.numel()),
                           nccl_type(tensor.dtype()), root, comm_, stream_);
    });
  }

  Device device_;
  CommunicatorOptions options_;
  int rank_, world_;
  CudaBackend* backend_ = nullptr;
  ncclComm_t comm_ = nullptr;
  cudaStream_t stream_ = nullptr;
  bool aborted_ = false;
};

}  // namespace

bool nccl_built() { return true; }

std::string nccl_library_version() {
  int version = 0;
  if (ncclGetVersion(&version) != ncclSuccess) return "";
  return fmt::format("{}.{}.{}", version / 10000, version / 100 % 100, version % 100);
}

std::unique_ptr<Communicator> nccl_communicator(Communicator& bootstrap, Device device,
                                                const CommunicatorOptions& options) {
  return std::make_unique<NcclCommunicator>(bootstrap, device, options);
}

}  // namespace mg::distributed
