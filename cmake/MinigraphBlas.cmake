# The GEMM library behind matmul on the CPU, chosen at configure time:
#   -DMINIGRAPH_BLAS=AUTO      (default) OpenBLAS when found, else Eigen's own GEMM
#   -DMINIGRAPH_BLAS=OpenBLAS  OpenBLAS, an error when missing (Debian: libopenblas-dev)
#   -DMINIGRAPH_BLAS=BLIS      BLIS, an error when missing (Debian: libblis-dev)
#   -DMINIGRAPH_BLAS=Eigen     no BLAS: Eigen's GEMM
# OpenBLAS is the default because it measured faster than BLIS at ANDREA's head shapes
# (docs/performance.md); `minigraph bench` reports the library in use.
#
# OpenBLAS is not linked but loaded at run time (framework/backends/cpu/gemm.cpp), so that
# minigraph can choose its kernels from the CPU's features before OpenBLAS's constructor picks
# them by CPU model: MG_OPENBLAS_PATH names the runtime library found here.
#
# Sets MINIGRAPH_GEMM_LIBRARY (OpenBLAS, BLIS or Eigen), MINIGRAPH_GEMM_LINK_LIBRARIES (what
# is linked, by full path: BLIS, or nothing) and minigraph_use_blas(<target>), which links
# that PRIVATE by full path (so the installed static library's link line names it without a
# find_dependency) and defines MG_GEMM_OPENBLAS (with MG_OPENBLAS_PATH) or MG_GEMM_BLIS.
set(MINIGRAPH_BLAS AUTO CACHE STRING "GEMM library for the CPU: AUTO, OpenBLAS, BLIS or Eigen")
set_property(CACHE MINIGRAPH_BLAS PROPERTY STRINGS AUTO OpenBLAS BLIS Eigen)

set(MINIGRAPH_GEMM_LIBRARY Eigen)
if(MINIGRAPH_BLAS STREQUAL "AUTO" OR MINIGRAPH_BLAS STREQUAL "OpenBLAS")
  # Debian ships OpenBLAS built on OpenMP (libopenblas-openmp-dev) beside the default pthread
  # build. The OpenMP one runs on minigraph's own OpenMP pool; the pthread one brings a second
  # pool whose threads compete with it for the cores (a whole step measured 5-10 % slower), so
  # it is taken only when the OpenMP one is missing. Both ship a CMake config.
  find_package(OpenBLAS CONFIG QUIET
               PATHS /usr/lib/${CMAKE_LIBRARY_ARCHITECTURE}/openblas-openmp/cmake/openblas
               NO_DEFAULT_PATH)
  if(NOT OpenBLAS_FOUND)
    find_package(OpenBLAS CONFIG QUIET)
  endif()
  if(OpenBLAS_FOUND)
    set(MINIGRAPH_GEMM_LIBRARY OpenBLAS)
    set(blas_include_dir ${OpenBLAS_INCLUDE_DIRS})
    # The runtime library (libopenblas.so.0, from Debian's libopenblas0-openmp) beside the
    # development link that the package config names.
    get_filename_component(openblas_dir "${OpenBLAS_LIBRARIES}" DIRECTORY)
    if(EXISTS "${openblas_dir}/libopenblas.so.0")
      set(MINIGRAPH_OPENBLAS_PATH "${openblas_dir}/libopenblas.so.0")
    else()
      file(REAL_PATH "${OpenBLAS_LIBRARIES}" MINIGRAPH_OPENBLAS_PATH)
    endif()
    set(blas_library "")
  elseif(MINIGRAPH_BLAS STREQUAL "OpenBLAS")
    message(FATAL_ERROR "MINIGRAPH_BLAS=OpenBLAS, but OpenBLAS was not found (libopenblas-dev)")
  endif()
elseif(MINIGRAPH_BLAS STREQUAL "BLIS")
  find_path(MINIGRAPH_BLIS_INCLUDE_DIR blis.h PATH_SUFFIXES blis blis-openmp blis-pthread)
  find_library(MINIGRAPH_BLIS_LIBRARY NAMES blis)
  if(NOT MINIGRAPH_BLIS_INCLUDE_DIR OR NOT MINIGRAPH_BLIS_LIBRARY)
    message(FATAL_ERROR "MINIGRAPH_BLAS=BLIS, but BLIS was not found (libblis-dev)")
  endif()
  set(MINIGRAPH_GEMM_LIBRARY BLIS)
  set(blas_include_dir ${MINIGRAPH_BLIS_INCLUDE_DIR})
  set(blas_library ${MINIGRAPH_BLIS_LIBRARY})
elseif(NOT MINIGRAPH_BLAS STREQUAL "Eigen")
  message(FATAL_ERROR "MINIGRAPH_BLAS must be AUTO, OpenBLAS, BLIS or Eigen, not '${MINIGRAPH_BLAS}'")
endif()
message(STATUS "minigraph: CPU GEMM through ${MINIGRAPH_GEMM_LIBRARY} ${blas_library}${MINIGRAPH_OPENBLAS_PATH}")
set(MINIGRAPH_GEMM_LINK_LIBRARIES ${blas_library})  # for minigraph.pc (MinigraphPkgConfig.cmake)

function(minigraph_use_blas target)
  if(MINIGRAPH_GEMM_LIBRARY STREQUAL "Eigen")
    return()
  endif()
  string(TOUPPER ${MINIGRAPH_GEMM_LIBRARY} upper)
  target_compile_definitions(${target} PRIVATE MG_GEMM_${upper})
  target_include_directories(${target} SYSTEM PRIVATE ${blas_include_dir})
  if(MINIGRAPH_GEMM_LIBRARY STREQUAL "OpenBLAS")
    target_compile_definitions(${target} PRIVATE MG_OPENBLAS_PATH="${MINIGRAPH_OPENBLAS_PATH}")
  else()
    target_link_libraries(${target} PRIVATE ${blas_library})
  endif()
endfunction()
