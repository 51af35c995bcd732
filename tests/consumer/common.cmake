# Shared by the install_* ctest drivers (cmake -P), which tests/CMakeLists.txt runs with
#   BUILD_DIR CONFIG PREFIX GENERATOR MAKE_PROGRAM CXX_COMPILER TOP_SOURCE_DIR CONSUMER_DIR
#   WITH_CUDA CUDA_BIN_DIR GEMM_LIBRARY VERSION PKG_CONFIG CTEST WORK_DIR, and CXX_FLAGS and
#   LINKER_FLAGS (the parent's, so a sanitizer build's consumers are built the same way)
# Every step says what it ran; a failing one prints its command and its whole output.

# mg_step(<what> COMMAND <cmd>... [WORKING_DIRECTORY <dir>] [OUTPUT_VARIABLE <var>])
function(mg_step what)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "WORKING_DIRECTORY;OUTPUT_VARIABLE" "COMMAND")
  if(NOT arg_WORKING_DIRECTORY)
    set(arg_WORKING_DIRECTORY ${WORK_DIR})
  endif()
  list(JOIN arg_COMMAND " " shown)
  message(STATUS "${what}: ${shown}")
  execute_process(COMMAND ${arg_COMMAND} WORKING_DIRECTORY ${arg_WORKING_DIRECTORY}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "FAILED: ${what} (exit ${rc})\n  command: ${shown}\n  output:\n${out}")
  endif()
  if(arg_OUTPUT_VARIABLE)
    set(${arg_OUTPUT_VARIABLE} "${out}" PARENT_SCOPE)
  endif()
endfunction()

function(mg_fail)
  string(JOIN "" text ${ARGN})
  message(FATAL_ERROR "FAILED: ${text}")
endfunction()

# <text> with the characters that mean something in a regex escaped.
function(mg_regex_escape out_var text)
  string(REGEX REPLACE "([][+.*()^$?|\\\\])" "\\\\\\1" text "${text}")
  set(${out_var} "${text}" PARENT_SCOPE)
endfunction()

# Fails unless <text> matches <regex>; the text is shown.
function(mg_expect_match what text regex)
  if(NOT text MATCHES "${regex}")
    mg_fail("${what}: expected a match of '${regex}' in:\n${text}")
  endif()
  message(STATUS "${what}: ok")
endfunction()

# The scratch install's folder holding the CMake package (lib/ or lib/<arch>/ ...).
function(mg_package_dir out_var)
  file(GLOB config ${PREFIX}/lib*/cmake/minigraph/minigraphConfig.cmake
                   ${PREFIX}/lib/*/cmake/minigraph/minigraphConfig.cmake)
  if(NOT config)
    mg_fail("no lib*/cmake/minigraph/minigraphConfig.cmake under ${PREFIX} (did install_to_scratch_prefix run?)")
  endif()
  list(GET config 0 config)
  get_filename_component(dir ${config} DIRECTORY)
  set(${out_var} ${dir} PARENT_SCOPE)
endfunction()

# Configures and builds an outside project against the scratch install with this build's
# generator (and make program), C++ compiler and build type, then checks that it really used
# that generator: CMake's default, Unix Makefiles, needs `make`, which a fresh Debian lacks.
function(mg_configure_and_build source build)
  set(args -S ${source} -B ${build} -G ${GENERATOR} -DCMAKE_PREFIX_PATH=${PREFIX}
           -DCMAKE_CXX_COMPILER=${CXX_COMPILER} -DCMAKE_BUILD_TYPE=${CONFIG}
           -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "-DCMAKE_CXX_FLAGS=${CXX_FLAGS}"
           "-DCMAKE_EXE_LINKER_FLAGS=${LINKER_FLAGS}" "-DCMAKE_SHARED_LINKER_FLAGS=${LINKER_FLAGS}"
           ${ARGN})
  if(MAKE_PROGRAM)
    list(APPEND args -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  if(WITH_CUDA AND CUDA_BIN_DIR)
    get_filename_component(cuda_root ${CUDA_BIN_DIR} DIRECTORY)
    list(APPEND args -DCUDAToolkit_ROOT=${cuda_root})
  endif()
  file(REMOVE_RECURSE ${build})
  mg_step("configure ${source}" COMMAND ${CMAKE_COMMAND} ${args} OUTPUT_VARIABLE out)
  set(configure_output "${out}" PARENT_SCOPE)
  file(STRINGS ${build}/CMakeCache.txt generator REGEX "^CMAKE_GENERATOR:INTERNAL=")
  if(NOT generator STREQUAL "CMAKE_GENERATOR:INTERNAL=${GENERATOR}")
    mg_fail("the consumer was configured with '${generator}', not this build's generator '${GENERATOR}'")
  endif()
  message(STATUS "consumer generator ${GENERATOR}: ok")
  mg_step("build ${source}" COMMAND ${CMAKE_COMMAND} --build ${build} --config ${CONFIG})
endfunction()
