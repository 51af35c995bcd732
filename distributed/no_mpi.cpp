// A build without MPI: the same functions, saying so.
#include "minigraph/distributed/mpi_communicator.h"
#include "minigraph/error.h"

namespace mg::distributed {

bool mpi_built() { return false; }
std::string mpi_library_version() { return ""; }

std::unique_ptr<Communicator> mpi_communicator(const CommunicatorOptions&) {
  throw Error("mpi_communicator", "build",
              "minigraph built with MPI (-DMINIGRAPH_MPI=ON; "
              "Debian: apt install libopenmpi-dev)",
              "a build without it");
}

}  // namespace mg::distributed
