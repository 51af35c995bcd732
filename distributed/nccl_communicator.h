// NCCL (shipped with the CUDA toolkit) as a Communicator for tensors on one GPU per rank.
// Collectives run on a CUDA stream of their own: each starts after the work already queued on
// the device's compute stream (an event), and Work::wait() makes the compute stream wait for it
// (another event), so neither the host nor the compute stream blocks while NCCL moves data.
#pragma once

#include <memory>

#include "minigraph/distributed/communicator.h"

namespace mg::distributed {

// Whether this build has NCCL (CMake: -DMINIGRAPH_NCCL=AUTO in a CUDA build).
bool nccl_built();
// NCCL's version ("2.27.7"), or "" without NCCL.
std::string nccl_library_version();

// A communicator over the ranks of `bootstrap` (an MPI communicator, or a local one for a
// single process), with this rank's tensors on `device` (a GPU): rank 0 makes NCCL's unique
// id and `bootstrap` carries it to the others. barrier() blocks the host until every rank's
// queued collectives are done, or throws after options.timeout_s (aborting the NCCL
// communicator, so no kernel keeps waiting on a dead rank). Throws mg::Error in a build
// without NCCL, for a device that is not a visible GPU, or when NCCL cannot start.
std::unique_ptr<Communicator> nccl_communicator(Communicator& bootstrap, Device device,
                                                const CommunicatorOptions& options = {});

}  // namespace mg::distributed
