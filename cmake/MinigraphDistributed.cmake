# The communicators of minigraph/distributed (distributed/CMakeLists.txt), found at the top level so that
# their imported targets are seen by the package library too.
# MINIGRAPH_MPI: AUTO builds the MPI communicator when CMake finds MPI (Debian:
# libopenmpi-dev), ON requires it, OFF leaves it out. MINIGRAPH_NCCL: the same for NCCL
# (shipped with the CUDA toolkit), in CUDA builds only. Both are reported by `minigraph
# --version`.
set(MINIGRAPH_MPI AUTO CACHE STRING "Build the MPI communicator: AUTO, ON or OFF")
set_property(CACHE MINIGRAPH_MPI PROPERTY STRINGS AUTO ON OFF)
set(MINIGRAPH_NCCL AUTO CACHE STRING "Build the NCCL communicator (CUDA builds): AUTO, ON or OFF")
set_property(CACHE MINIGRAPH_NCCL PROPERTY STRINGS AUTO ON OFF)

set(MINIGRAPH_WITH_MPI OFF)
if(NOT MINIGRAPH_MPI STREQUAL "OFF")
  # The C API through the CXX component (no C language to enable), without the C++ bindings.
  set(MPI_CXX_SKIP_MPICXX ON)
  find_package(MPI COMPONENTS CXX QUIET)
  if(MPI_CXX_FOUND)
    set(MINIGRAPH_WITH_MPI ON)
  elseif(MINIGRAPH_MPI STREQUAL "ON")
    message(FATAL_ERROR "MINIGRAPH_MPI=ON but no MPI was found (Debian: apt install libopenmpi-dev)")
  endif()
endif()

set(MINIGRAPH_WITH_NCCL OFF)
if(NOT MINIGRAPH_NCCL STREQUAL "OFF" AND MINIGRAPH_WITH_CUDA)
  find_path(MINIGRAPH_NCCL_INCLUDE_DIR nccl.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
  find_library(MINIGRAPH_NCCL_LIBRARY nccl
               HINTS ${CUDAToolkit_LIBRARY_DIR} ${CUDAToolkit_LIBRARY_ROOT}/lib)
  if(MINIGRAPH_NCCL_INCLUDE_DIR AND MINIGRAPH_NCCL_LIBRARY)
    set(MINIGRAPH_WITH_NCCL ON)
  endif()
endif()
if(MINIGRAPH_NCCL STREQUAL "ON" AND NOT MINIGRAPH_WITH_NCCL)
  message(FATAL_ERROR "MINIGRAPH_NCCL=ON but NCCL was not found (it needs the CUDA backend, "
                      "nccl.h and libnccl from the CUDA toolkit)")
endif()
message(STATUS "minigraph: MPI communicator ${MINIGRAPH_WITH_MPI}, "
               "NCCL communicator ${MINIGRAPH_WITH_NCCL}")

