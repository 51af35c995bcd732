// The MPI job a `minigraph train` runs in, if any: its communicators, and what a rank does when
// it fails (the whole job ends, not just this process).
#pragma once

#include <memory>
#include <string>

#include "minigraph/distributed/communicator.h"
#include "minigraph/dtype.h"

namespace mg::cli {

class DistributedJob {
 public:
  // mode "none": one process. "mpi": the MPI job this process is a rank of. "auto": "mpi" when
  // started by an MPI launcher (mpirun), else "none". A CUDA run gets an NCCL communicator on
  // `device` (cuda: this rank's local GPU when no index was given) with MPI carrying NCCL's id.
  // Throws CantWorkError when MPI is wanted and this build has none.
  DistributedJob(const std::string& mode, Device& device, double timeout_s);
  ~DistributedJob();
  DistributedJob(const DistributedJob&) = delete;
  DistributedJob& operator=(const DistributedJob&) = delete;

  bool distributed() const { return world() > 1; }
  int rank() const;
  int world() const;
  // The communicator the trainer reduces gradients with (NCCL for a GPU run, else MPI); null
  // for one process.
  distributed::Communicator* gradients() const;
  // "mpi, 2 ranks" / "mpi + nccl, 2 ranks": for the run's header line.
  std::string describe() const;
  // Whether any rank asked to stop (a collective: every rank calls it after each step).
  bool any(bool mine) const;
  // A rank's error: printed with the rank's number, then every process of the job ends with
  // `exit_code` (MPI_Abort), so that none waits forever for this one.
  [[noreturn]] void fail(int exit_code, const std::string& message) const;

 private:
  std::unique_ptr<distributed::Communicator> mpi_, nccl_;
};

}  // namespace mg::cli
