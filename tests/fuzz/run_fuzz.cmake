# ctest fuzz_build and fuzz_<target>_smoke (tests/fuzz/CMakeLists.txt). STEP=build configures
# the clang fuzz build (tests/fuzz/project) in BUILD_DIR and builds TARGETS (comma-separated);
# STEP=run runs TARGET of that build for SECONDS seconds on a copy of its seed corpus
# (tests/fuzz/corpus/CORPUS), with DICT as its dictionary when given. A run fails on any finding:
# libFuzzer's exit status (a crash, an uncaught exception, a sanitizer report, a leak, a slow
# input, the RSS limit), a sanitizer's or the target's own report in the output, or an input
# libFuzzer saved as an artifact. Run with
#   SOURCE_DIR BUILD_DIR GENERATOR MAKE_PROGRAM CLANGXX STEP, and TARGETS (build) or
#   WORK_DIR SECONDS TARGET CORPUS [DICT] (run)
# The build folder is kept between runs, so a rebuild compiles only what changed.
cmake_minimum_required(VERSION 3.24)  # policies of this script
include(${CMAKE_CURRENT_LIST_DIR}/../consumer/common.cmake)  # mg_step, mg_fail

set(build ${BUILD_DIR})
if(STEP STREQUAL "build")
  file(MAKE_DIRECTORY ${build})
  set(WORK_DIR ${build})  # where mg_step runs
  # A build folder configured with another compiler cannot be reconfigured: start it afresh.
  if(EXISTS ${build}/CMakeCache.txt)
    file(STRINGS ${build}/CMakeCache.txt cached REGEX "^CMAKE_CXX_COMPILER:[A-Z]+=")
    string(REGEX REPLACE "^[^=]*=" "" cached "${cached}")
    if(NOT cached STREQUAL CLANGXX)
      file(REMOVE_RECURSE ${build})
    endif()
  endif()
  set(configure -S ${SOURCE_DIR}/tests/fuzz/project -B ${build} -G ${GENERATOR}
                -DCMAKE_CXX_COMPILER=${CLANGXX})
  if(MAKE_PROGRAM)
    list(APPEND configure -DCMAKE_MAKE_PROGRAM=${MAKE_PROGRAM})
  endif()
  mg_step("configure the fuzz build" COMMAND ${CMAKE_COMMAND} ${configure})
  # Two jobs: what CI machines here have.
  string(REPLACE "," ";" targets "${TARGETS}")
  mg_step("build ${TARGETS}"
          COMMAND ${CMAKE_COMMAND} --build ${build} --target ${targets} --parallel 2)
  return()
elseif(NOT STEP STREQUAL "run")
  mg_fail("STEP must be build or run, got '${STEP}'")
endif()

set(corpus ${WORK_DIR}/corpus)
set(artifacts ${WORK_DIR}/artifacts)
set(log ${WORK_DIR}/fuzz.log)
file(MAKE_DIRECTORY ${WORK_DIR})
file(REMOVE_RECURSE ${corpus} ${artifacts})
file(MAKE_DIRECTORY ${artifacts})
file(COPY ${SOURCE_DIR}/tests/fuzz/corpus/${CORPUS}/ DESTINATION ${corpus})
set(fuzz ${build}/${TARGET} -max_total_time=${SECONDS} -rss_limit_mb=2048 -timeout=25
         -artifact_prefix=${artifacts}/ -print_final_stats=1)
if(DICT)
  list(APPEND fuzz -dict=${SOURCE_DIR}/tests/fuzz/${DICT})
endif()
list(APPEND fuzz ${corpus})
list(JOIN fuzz " " shown)
message(STATUS "fuzz: ${shown}")
execute_process(COMMAND ${CMAKE_COMMAND} -E env UBSAN_OPTIONS=print_stacktrace=1 ${fuzz}
                RESULT_VARIABLE rc OUTPUT_FILE ${log} ERROR_FILE ${log})
file(READ ${log} out)

# The end of the log, where the report of a finding is (by characters: the log's brackets
# would confuse a CMake list of its lines).
function(show_tail text chars)
  string(LENGTH "${text}" length)
  if(length GREATER chars)
    math(EXPR start "${length} - ${chars}")
    string(SUBSTRING "${text}" ${start} ${chars} text)
    set(text "...${text}")
  endif()
  message("${text}")
endfunction()

file(GLOB saved ${artifacts}/*)
if(NOT rc STREQUAL "0" OR saved OR
   out MATCHES "ERROR: (AddressSanitizer|LeakSanitizer|UndefinedBehaviorSanitizer|libFuzzer)|runtime error:|FINDING:")
  show_tail("${out}" 8000)
  foreach(input IN LISTS saved)
    file(READ ${input} hex HEX)
    message("saved input ${input} (hex): ${hex}")
  endforeach()
  mg_fail("${TARGET} found a problem (exit ${rc}), the whole log is ${log}. Reproduce it "
          "with ${build}/${TARGET} <saved input>, and once the bug is fixed keep the input as "
          "a seed under tests/fuzz/corpus/${CORPUS}/")
endif()
string(REGEX MATCH "#[0-9]+[ \t]+DONE[^\n]*" done "${out}")
string(REGEX MATCHALL "stat::[a-z_]+: *[0-9]+" stats "${out}")
string(REGEX REPLACE ": +" ": " stats "${stats}")
list(JOIN stats ", " stats)
message(STATUS "no finding in ${SECONDS} s: ${done}\n   ${stats}")
