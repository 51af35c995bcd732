// A build without NCCL: the same functions, saying so.
#include "minigraph/distributed/nccl_communicator.h"
#include "minigraph/error.h"

namespace mg::distributed {

bool nccl_built() { return false; }
std::string nccl_library_version() { return ""; }

std::unique_ptr<Communicator> nccl_communicator(Communicator&, Device, const CommunicatorOptions&) {
  throw Error("nccl_communicator", "build",
              "minigraph built with NCCL (a CUDA build, -DMINIGRAPH_NCCL=ON)",
              "a build without it");
}

}  // namespace mg::distributed
