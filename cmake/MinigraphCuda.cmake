# CUDA is optional: AUTO builds the CUDA backend when a CUDA compiler and cuBLAS are found, ON
# requires them, OFF leaves the backend out. Sets MINIGRAPH_WITH_CUDA for the rest of the build.
set(MINIGRAPH_CUDA AUTO CACHE STRING "Build the CUDA backend: AUTO, ON or OFF")
set_property(CACHE MINIGRAPH_CUDA PROPERTY STRINGS AUTO ON OFF)
set(MINIGRAPH_WITH_CUDA OFF)
if(NOT MINIGRAPH_CUDA STREQUAL "OFF")
  include(CheckLanguage)
  check_language(CUDA)
  if(CMAKE_CUDA_COMPILER)
    set(MINIGRAPH_WITH_CUDA ON)
  elseif(MINIGRAPH_CUDA STREQUAL "ON")
    message(FATAL_ERROR "MINIGRAPH_CUDA=ON but no CUDA compiler was found")
  endif()
endif()

if(MINIGRAPH_WITH_CUDA)
  # sm_90 machine code (H100/H200) plus compute_90 PTX, which newer GPUs compile at load time.
  # One architecture keeps CI builds lean; set explicitly because CMake's detection of the
  # native GPU fails on machines without one. Override with -DCMAKE_CUDA_ARCHITECTURES=...
  if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
    set(CMAKE_CUDA_ARCHITECTURES 90)
  endif()
  set(CMAKE_CUDA_EXTENSIONS OFF)
  # The shared runtime, for minigraph and every program linking it: one CUDA runtime per
  # process (CUDA::cudart), not a static copy beside it.
  set(CMAKE_CUDA_RUNTIME_LIBRARY Shared)
  enable_language(CUDA)
  # C++20 in .cu files as in the C++ code, so a kernel's .cu includes the op-author API
  # (minigraph/op.h) and holds the host side of its op too: no adapter file beside it. Set
  # after enable_language, whose compiler checks CMake 3.25 runs without a C++20 flag for nvcc
  # (3.26 has one; nvcc 12+ takes -std=c++20).
  if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION)
    set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
    set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  endif()
  set(CMAKE_CUDA_STANDARD 20)
  set(CMAKE_CUDA_STANDARD_REQUIRED ON)
  # fmt 9 turns its constexpr off under nvcc, and then its consteval format strings fail to
  # compile in nvcc's front end: constexpr back on and no compile-time format check in .cu
  # files (the C++ files keep it).
  add_compile_definitions($<$<COMPILE_LANGUAGE:CUDA>:FMT_USE_CONSTEXPR=1> $<$<COMPILE_LANGUAGE:CUDA>:FMT_CONSTEVAL=>)
  find_package(CUDAToolkit)
  if(NOT TARGET CUDA::cudart OR NOT TARGET CUDA::cublas)
    if(MINIGRAPH_CUDA STREQUAL "ON")
      message(FATAL_ERROR "MINIGRAPH_CUDA=ON but the CUDA Toolkit's runtime or cuBLAS was not found")
    endif()
    message(WARNING "minigraph: nvcc found but not the CUDA runtime and cuBLAS; building without CUDA")
    set(MINIGRAPH_WITH_CUDA OFF)
  endif()
endif()
if(MINIGRAPH_WITH_CUDA)
  message(STATUS "minigraph: CUDA backend ON (CUDA ${CUDAToolkit_VERSION}, architectures ${CMAKE_CUDA_ARCHITECTURES})")
else()
  message(STATUS "minigraph: CUDA backend OFF")
endif()

# nvcc's own warnings and the host compiler's in a target's .cu files, as errors like the C++
# code's.
function(minigraph_cuda_warnings target)
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra>
    $<$<AND:$<COMPILE_LANGUAGE:CUDA>,$<BOOL:${MINIGRAPH_WARNINGS_AS_ERRORS}>>:--Werror=all-warnings -Xcompiler=-Werror>)
endfunction()
