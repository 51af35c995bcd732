// The MPI communicator: MPI_COMM_WORLD duplicated, its collectives run on one thread of their
// own in the order they were called (every rank calls them in the same order, as MPI requires),
// and a wait that gives up after the timeout instead of hanging on a rank that died.
#include "mpi_communicator.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <deque>
#include <functional>
#include <limits>
#include <mutex>
#include <thread>

#include "minigraph/error.h"

namespace mg::distributed {

namespace {

MPI_Datatype mpi_type(DType dtype) {
  switch (dtype) {
    case DType::f32:
      return MPI_FLOAT;
    case DType::f64:
      return MPI_DOUBLE;
    case DType::i32:
      return MPI_INT32_T;
    case DType::i64:
      return MPI_INT64_T;
    case DType::boolean:  // masks are never reduced
      break;
  }
  throw Error("mpi", "dtype", "f32, f64, i32 or i64", std::string(dtype_name(dtype)));
}

std::string mpi_error_text(int code) {
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  return std::string(text, static_cast<std::size_t>(length));
}

// MPI counts are int: a tensor of more elements goes in pieces of at most 2^30.
template <typename Call>
int in_pieces(const Tensor& tensor, Call&& call) {
  constexpr std::int64_t kPiece = std::int64_t{1} << 30;
  auto* base = static_cast<char*>(tensor.raw_data());
  const std::size_t element = dtype_size(tensor.dtype());
  for (std::int64_t at = 0; at < tensor.numel(); at += kPiece) {
    const std::int64_t count = std::min(kPiece, tensor.numel() - at);
    const int rc = call(base + static_cast<std::size_t>(at) * element, static_cast<int>(count));
    if (rc != MPI_SUCCESS) return rc;
  }
  return MPI_SUCCESS;
}

template <typename T>
void divide(const Tensor& tensor, int by) {
  T* data = tensor.data<T>();
  const auto n = static_cast<T>(by);
  for (std::int64_t i = 0; i < tensor.numel(); ++i) data[i] /= n;
}

class MpiWork final : public Work {
 public:
  MpiWork(std::string op, int world, double timeout_s)
      : op_(std::move(op)), world_(world), timeout_s_(timeout_s) {}

  void wait() override {
    std::unique_lock lock(mutex_);
    auto finished = [&] { return done_; };
    if (timeout_s_ > 0) {
      const auto limit = std::chrono::duration<double>(timeout_s_);
      MG_CHECK(cv_.wait_for(lock, limit, finished), op_, "ranks",
               fmt::format("all {} ranks in the collective within {} s (the timeout)", world_,
                           timeout_s_),
               "no answer: a rank died, stalled or called another collective, and the job "
               "cannot go on");
    } else {
      cv_.wait(lock, finished);
    }
    MG_CHECK(error_.empty(), op_, "mpi", "success", "{}", error_);
  }

  void finish(std::string error) {
    {
      std::lock_guard lock(mutex_);
      done_ = true;
      error_ = std::move(error);
    }
    cv_.notify_all();
  }

 private:
  std::string op_;
  int world_;
  double timeout_s_;
  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string error_;
};

// The collectives' thread and its queue. Shared with the thread, so that a communicator whose
// collective never completed can be destroyed while the thread stays behind in MPI.
struct Worker {
  struct Task {
    std::shared_ptr<MpiWork> work;
    std::function<int()> call;
  };
  std::mutex mutex;
  std::condition_variable cv;
  std::deque<Task> queue;
  bool stopping = false;
  std::atomic<bool> stuck{false};  // a wait timed out: a collective may never return

  void enqueue(std::shared_ptr<MpiWork> work, std::function<int()> call) {
    {
      std::lock_guard lock(mutex);
      queue.push_back({std::move(work), std::move(call)});
    }
    cv.notify_all();
  }

  static void run(std::shared_ptr<Worker> self) {
    while (true) {
      Task task;
      {
        std::unique_lock lock(self->mutex);
        self->cv.wait(lock, [&] { return self->stopping || !self->queue.empty(); });
        if (self->queue.empty()) return;  // stopping, with nothing left to run
        task = std::move(self->queue.front());
        self->queue.pop_front();
      }
      std::string error;
      try {
        const int rc = task.call();
        if (rc != MPI_SUCCESS) error = mpi_error_text(rc);
      } catch (const std::exception& e) {
        error = e.what();
      }
      task.work->finish(std::move(error));
    }
  }

  void wait(MpiWork& work) {
    try {
      work.wait();
    } catch (const Error& e) {
      if (e.argument() == "ranks") stuck = true;
      throw;
    }
  }
};

// The handle given out: a wait that times out marks the worker stuck.
class WatchedWork final : public Work {
 public:
  WatchedWork(std::shared_ptr<Worker> worker, std::shared_ptr<MpiWork> work)
      : worker_(std::move(worker)), work_(std::move(work)) {}
  void wait() override { worker_->wait(*work_); }

 private:
  std::shared_ptr<Worker> worker_;
  std::shared_ptr<MpiWork> work_;
};

class MpiCommunicator final : public Communicator {
 public:
  explicit MpiCommunicator(const CommunicatorOptions& options) : options_(options) {
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    MG_CHECK(!finalized, "mpi_communicator", "MPI", "an MPI that can start",
             "one finalised already in this process (MPI starts once per process)");
    int provided = 0;
    if (!initialized) {
      const int rc = MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided);
      MG_CHECK(rc == MPI_SUCCESS, "mpi_communicator", "MPI_Init_thread", "success", "{}",
               mpi_error_text(rc));
      owns_mpi_ = true;
    } else {
      MPI_Query_thread(&provided);
    }
    MG_CHECK(provided >= MPI_THREAD_MULTIPLE, "mpi_communicator", "MPI",
             "MPI_THREAD_MULTIPLE (collectives on a thread of their own)",
             "thread level {} from this MPI library", provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_set_errhandler(comm_, MPI_ERRORS_RETURN);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &world_);
    thread_ = std::thread(Worker::run, worker_);
  }

  ~MpiCommunicator() override {
    {
      std::lock_guard lock(worker_->mutex);
      worker_->stopping = true;
    }
    worker_->cv.notify_all();
    // A collective that never completed (its wait timed out) holds the thread in MPI: it is
    // left behind with the queue it shares, and MPI is not finalised under it.
    if (worker_->stuck) {
      thread_.detach();
      return;
    }
    thread_.join();
    MPI_Comm_free(&comm_);
    if (owns_mpi_) MPI_Finalize();
  }

  int rank() const override { return rank_; }
  int world_size() const override { return world_; }
  std::string name() const override { return "mpi"; }
  Device device() const override { return Device::cpu(); }

  void barrier() override {
    auto work = std::make_shared<MpiWork>("barrier", world_, options_.timeout_s);
    worker_->enqueue(work, [comm = comm_] { return MPI_Barrier(comm); });
    worker_->wait(*work);
  }

  [[noreturn]] void abort(int exit_code) override {
    MPI_Abort(comm_, exit_code);
    std::_Exit(exit_code);  // MPI_Abort returns only if the library could not end the job
  }

 private:
  std::shared_ptr<Work> all_reduce_checked(const Tensor& tensor, ReduceOp op) override {
    auto work = std::make_shared<MpiWork>("all_reduce", world_, options_.timeout_s);
    // The task's copy of the handle keeps the tensor alive until the collective is done.
    worker_->enqueue(work, [comm = comm_, world = world_, tensor, op] {
      const MPI_Datatype type = mpi_type(tensor.dtype());
      const int rc = in_pieces(tensor, [&](void* data, int count) {
        return MPI_Allreduce(MPI_IN_PLACE, data, count, type, MPI_SUM, comm);
      });
      if (rc == MPI_SUCCESS && op == ReduceOp::mean) {
        tensor.dtype() == DType::f32 ? divide<float>(tensor, world) : divide<double>(tensor, world);
      }
      return rc;
    });
    return std::make_shared<WatchedWork>(worker_, work);
  }

  std::shared_ptr<Work> broadcast_checked(const Tensor& tensor, int root) override {
    auto work = std::make_shared<MpiWork>("broadcast", world_, options_.timeout_s);
    worker_->enqueue(work, [comm = comm_, tensor, root] {
      const MPI_Datatype type = mpi_type(tensor.dtype());
      return in_pieces(
          tensor, [&](void* data, int count) { return MPI_Bcast(data, count, type, root, comm); });
    });
    return std::make_shared<WatchedWork>(worker_, work);
  }

  CommunicatorOptions options_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, world_ = 1;
  bool owns_mpi_ = false;
  std::shared_ptr<Worker> worker_ = std::make_shared<Worker>();
  std::thread thread_;
};

}  // namespace

bool mpi_built() { return true; }

std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING];
  int length = 0;
  MPI_Get_library_version(text, &length);
  std::string version(text, static_cast<std::size_t>(length));
  const auto end = version.find_first_of(",\n");
  return end == std::string::npos ? version : version.substr(0, end);
}

std::unique_ptr<Communicator> mpi_communicator(const CommunicatorOptions& options) {
  return std::make_unique<MpiCommunicator>(options);
}

}  // namespace mg::distributed
