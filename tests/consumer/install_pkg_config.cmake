# ctest install_pkg_config: the installed minigraph.pc, as a build outside CMake uses it.
# With PKG_CONFIG_PATH at the scratch install: checks the version, the GEMM library and CUDA
# recorded in it, that --cflags points at the install's include/ and that --libs names what
# the static library needs (fmt, the GEMM library, OpenMP, libdl, CUDA's runtime and cuBLAS in
# CUDA builds); then compiles tests/consumer/main.cpp with
#   c++ -std=c++20 main.cpp $(pkg-config --cflags --libs minigraph)
# and runs it.
cmake_minimum_required(VERSION 3.24)  # policies of this script
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(REMOVE_RECURSE ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
if(NOT PKG_CONFIG)
  mg_fail("pkg-config was not found at configure time (Debian: pkgconf; tools/install-deps.sh installs it)")
endif()
file(GLOB pc_dir ${PREFIX}/lib*/pkgconfig ${PREFIX}/lib/*/pkgconfig)
if(NOT EXISTS ${pc_dir}/minigraph.pc)
  mg_fail("no lib*/pkgconfig/minigraph.pc under ${PREFIX}")
endif()
set(ENV{PKG_CONFIG_PATH} ${pc_dir})
message(STATUS "PKG_CONFIG_PATH=${pc_dir}")

mg_step("pkg-config --modversion" COMMAND ${PKG_CONFIG} --modversion minigraph OUTPUT_VARIABLE out)
mg_expect_match("version ${VERSION}" "${out}" "^${VERSION}\n$")
mg_step("pkg-config --variable=gemm" COMMAND ${PKG_CONFIG} --variable=gemm minigraph OUTPUT_VARIABLE out)
mg_expect_match("GEMM library ${GEMM_LIBRARY}" "${out}" "^${GEMM_LIBRARY}\n$")
if(WITH_CUDA)
  set(cuda yes)
else()
  set(cuda no)
endif()
mg_step("pkg-config --variable=cuda" COMMAND ${PKG_CONFIG} --variable=cuda minigraph OUTPUT_VARIABLE out)
mg_expect_match("CUDA backend: ${cuda}" "${out}" "^${cuda}\n$")

mg_step("pkg-config --cflags" COMMAND ${PKG_CONFIG} --cflags minigraph OUTPUT_VARIABLE cflags)
string(STRIP "${cflags}" cflags)
separate_arguments(cflags UNIX_COMMAND "${cflags}")
set(include_ok FALSE)
file(REAL_PATH ${PREFIX}/include include)
foreach(flag IN LISTS cflags)
  if(flag MATCHES "^-I(.+)$")
    file(REAL_PATH ${CMAKE_MATCH_1} dir)
    if(dir STREQUAL include)
      set(include_ok TRUE)
    endif()
  endif()
endforeach()
if(NOT include_ok)
  mg_fail("pkg-config --cflags has no -I for ${include}: ${cflags}")
endif()
message(STATUS "--cflags: ${cflags}: ok")

mg_step("pkg-config --libs" COMMAND ${PKG_CONFIG} --libs minigraph OUTPUT_VARIABLE libs)
string(STRIP "${libs}" libs)
# OpenBLAS is not linked: minigraph loads it at run time, after choosing its kernels.
set(needed -lminigraph -lfmt -fopenmp -ldl)
if(GEMM_LIBRARY STREQUAL "BLIS")
  list(APPEND needed -lblis)
endif()
if(WITH_CUDA)
  list(APPEND needed -lcudart -lcublas)
endif()
separate_arguments(lib_flags UNIX_COMMAND "${libs}")
foreach(flag IN LISTS needed)
  if(NOT flag IN_LIST lib_flags)
    mg_fail("pkg-config --libs lacks ${flag}: ${libs}")
  endif()
endforeach()
message(STATUS "--libs: ${libs}: has ${needed}: ok")

# The parent build's own flags too (a sanitizer build's), split into arguments.
separate_arguments(extra_flags UNIX_COMMAND "${CXX_FLAGS} ${LINKER_FLAGS}")
mg_step("compile tests/consumer/main.cpp with pkg-config's flags"
        COMMAND ${CXX_COMPILER} -std=c++20 ${extra_flags} ${CONSUMER_DIR}/main.cpp ${cflags}
                ${lib_flags} -o ${WORK_DIR}/consumer_pc)
mg_step("run it" COMMAND ${WORK_DIR}/consumer_pc OUTPUT_VARIABLE out)
mg_expect_match("its result" "${out}" "consumer: logits \\[1, 3, 13\\], ok")
