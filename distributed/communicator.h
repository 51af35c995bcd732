// The communicator: how the processes of one job exchange tensors, beside the backend
// interface (backend.h) and as small: rank, world size, all-reduce, broadcast and barrier,
// each collective also asynchronous with a handle to wait on. Implementations: local (one
// process, collectives are no-ops), MPI (CPU tensors; mpi_communicator.h) and NCCL (CUDA
// tensors; nccl_communicator.h). Every rank must call the same collectives in the same order
// with tensors of the same shape and dtype, as MPI and NCCL require.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "minigraph/tensor.h"

namespace mg::distributed {

enum class ReduceOp { sum, mean };

// A collective in flight. wait() returns once the result is in the tensor as far as the
// tensor's device is concerned: on the CPU, written; on a GPU, ordered before any kernel
// queued after wait() returns. It throws mg::Error when the collective failed or did not
// complete within the communicator's timeout (a rank died, stalled or called another
// collective); the job is then broken and should be ended with Communicator::abort.
class Work {
 public:
  virtual ~Work() = default;
  virtual void wait() = 0;
};

struct CommunicatorOptions {
  // Seconds a collective may wait for the other ranks before wait() throws; <= 0: forever.
  // Ranks legitimately wait for one another's work (rank 0 training the tokenizer, writing a
  // checkpoint): the default is PyTorch's 10 minutes.
  double timeout_s = 600;
};

class Communicator {
 public:
  virtual ~Communicator() = default;
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;

  virtual int rank() const = 0;
  virtual int world_size() const = 0;
  virtual std::string name() const = 0;  // "local", "mpi", "nccl"
  // The device of the tensors this communicator moves (CPU for MPI, a GPU for NCCL).
  virtual Device device() const = 0;

  // In place: every rank's `tensor` becomes the sum (or mean) over the ranks. `tensor` must be
  // defined, contiguous and on device(); f32, f64, i32 or i64 (mean: f32 or f64). The work
  // keeps the tensor alive until it is done; nothing may read or write it before wait().
  std::shared_ptr<Work> all_reduce_async(const Tensor& tensor, ReduceOp op = ReduceOp::sum);
  // In place: every rank's `tensor` becomes root's.
  std::shared_ptr<Work> broadcast_async(const Tensor& tensor, int root = 0);
  void all_reduce(const Tensor& tensor, ReduceOp op = ReduceOp::sum) {
    all_reduce_async(tensor, op)->wait();
  }
  void broadcast(const Tensor& tensor, int root = 0) { broadcast_async(tensor, root)->wait(); }
  // Returns once every rank has called it (or throws after the timeout).
  virtual void barrier() = 0;
  // Ends every process of the job with `exit_code` (MPI_Abort): what a rank that met an error
  // the others cannot know of calls, so that they do not wait for it forever. Does not return.
  [[noreturn]] virtual void abort(int exit_code) = 0;

 protected:
  Communicator() = default;
  virtual std::shared_ptr<Work> all_reduce_checked(const Tensor& tensor, ReduceOp op) = 0;
  virtual std::shared_ptr<Work> broadcast_checked(const Tensor& tensor, int root) = 0;
};

// One process: collectives leave tensors as they are (the sum and the mean over one rank).
std::unique_ptr<Communicator> local_communicator(Device device = Device::cpu());

// Root's bytes on every rank (two broadcasts: the size, then the bytes).
std::string broadcast_bytes(Communicator& comm, std::string bytes, int root = 0);

// Throws mg::Error on every rank unless every rank passed the same `identity` (a description
// of the model and the run: names, shapes, dtypes, settings); its message names the ranks
// that differ from rank 0 and, on those ranks, the first differing line. `what` names the
// check in the error ("train").
void check_same_on_every_rank(Communicator& comm, const std::string& what,
                              const std::string& identity);

}  // namespace mg::distributed
