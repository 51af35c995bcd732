// MPI (Debian's OpenMPI) as a Communicator for CPU tensors: the engine HPC clusters run and
// `mpirun` starts. Collectives run in the order they are called on one thread of their own,
// so a reduction started during the backward pass proceeds while the pass computes.
#pragma once

#include <memory>
#include <string>

#include "minigraph/distributed/communicator.h"

namespace mg::distributed {

// Whether this build has MPI (CMake: -DMINIGRAPH_MPI=AUTO finds it, ON requires it).
bool mpi_built();
// The MPI library's own version line ("Open MPI v4.1.4, ..."), or "" without MPI.
std::string mpi_library_version();
// Whether this process was started as one rank of an MPI job (mpirun, mpiexec, srun): the
// environment the launchers set (OMPI_COMM_WORLD_SIZE, PMI_SIZE, PMIX_RANK).
bool in_mpi_job();
// This process's rank as the launcher wrote it in the environment (OMPI_COMM_WORLD_RANK,
// PMI_RANK, PMIX_RANK), readable before MPI starts; 0 outside a job. What decides, for
// instance, which rank reports a bad command line that every rank sees alike.
int launcher_rank();

// MPI_COMM_WORLD (a duplicate of it) as a Communicator. The first call initialises MPI
// (MPI_THREAD_MULTIPLE: collectives run on the communicator's thread, abort() may come from
// any) and the communicator that did finalises it when destroyed: keep it for as long as the
// process uses MPI (MPI cannot start twice in one process). Throws mg::Error in a build
// without MPI, or when MPI cannot start.
std::unique_ptr<Communicator> mpi_communicator(const CommunicatorOptions& options = {});

}  // namespace mg::distributed
