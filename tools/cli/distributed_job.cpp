// `minigraph train` as one rank of an MPI job: MPI for the processes, NCCL for their GPUs.
#include "distributed_job.h"

#include <fmt/format.h>

#include <cstdio>
#include <cstdlib>

#include "commands.h"
#include "minigraph/backend.h"
#include "minigraph/distributed/mpi_communicator.h"
#include "minigraph/distributed/nccl_communicator.h"
#include "minigraph/tensor.h"

namespace mg::cli {

namespace {

// The rank's index among the ranks on its machine, from the launcher's environment.
int local_rank() {
  for (const char* name : {"OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    if (const char* value = std::getenv(name)) return std::atoi(value);
  }
  return 0;
}

}  // namespace

DistributedJob::DistributedJob(const std::string& mode, Device& device, double timeout_s) {
  if (mode == "mpi" && !distributed::in_mpi_job()) {
    throw UsageError(
        "train --dist mpi: expected a process started by an MPI launcher (mpirun -n N minigraph "
        "train ...), got none (without one the run would be a single rank)");
  }
  const bool wanted = mode == "mpi" || (mode == "auto" && distributed::in_mpi_job());
  if (!wanted) return;
  if (!distributed::mpi_built()) {
    throw CantWorkError(
        fmt::format("train --dist {}: expected a minigraph built with MPI (Debian: apt install "
                    "libopenmpi-dev, then build again), got one without it{}",
                    mode, distributed::in_mpi_job() ? " while started by an MPI launcher" : ""));
  }
  distributed::CommunicatorOptions options;
  options.timeout_s = timeout_s;
  mpi_ = distributed::mpi_communicator(options);
  if (device.kind == DeviceKind::cuda) {
    const int gpus = device_count(DeviceKind::cuda);
    if (gpus > 0 && device.index == 0) device.index = local_rank() % gpus;
    if (mpi_->world_size() > 1) nccl_ = distributed::nccl_communicator(*mpi_, device, options);
  }
}

DistributedJob::~DistributedJob() = default;

int DistributedJob::rank() const { return mpi_ ? mpi_->rank() : 0; }
int DistributedJob::world() const { return mpi_ ? mpi_->world_size() : 1; }

distributed::Communicator* DistributedJob::gradients() const {
  if (!distributed()) return nullptr;
  return nccl_ ? nccl_.get() : mpi_.get();
}

std::string DistributedJob::describe() const {
  return fmt::format("data parallel: {}{}, {} ranks (batch rows per rank: B / {})", mpi_->name(),
                     nccl_ ? " + nccl" : "", world(), world());
}

bool DistributedJob::any(bool mine) const {
  if (!distributed()) return mine;
  Tensor flag = Tensor::full({1}, mine ? 1 : 0, DType::i64);
  mpi_->all_reduce(flag);
  return flag.item() > 0;
}

void DistributedJob::fail(int exit_code, const std::string& message) const {
  std::fflush(stdout);
  fmt::print(stderr, "error: rank {} of {}: {}\n", rank(), world(), message);
  std::fflush(stderr);
  if (mpi_) mpi_->abort(exit_code);
  std::_Exit(exit_code);
}

}  // namespace mg::cli
