# ctest install_op_library_outside: builds examples/custom_op as an outside project against
# the scratch install (find_package(minigraph) + the one line minigraph_add_op_library), then
#   - its static library and its plugin libminigraph_scaled_gelu.so exist;
#   - its ctest lists the op harness tests of its op (ops.scaled_gelu_<case>_cpu_<dtype>_...)
#     and the example program, and runs them all, passing;
#   - the installed `minigraph` CLI loads the plugin built outside and gradchecks its op.
cmake_minimum_required(VERSION 3.24)  # policies of this script
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})
set(build ${WORK_DIR}/build)
mg_configure_and_build(${TOP_SOURCE_DIR}/examples/custom_op ${build})
if(configure_output MATCHES "no op harness tests")
  mg_fail("minigraph_add_op_library built no op harness:\n${configure_output}")
endif()

file(GLOB_RECURSE plugin ${build}/libminigraph_scaled_gelu.so)
file(GLOB_RECURSE static ${build}/libscaled_gelu.a)
if(NOT plugin OR NOT static)
  mg_fail("expected libscaled_gelu.a and libminigraph_scaled_gelu.so under ${build}, found '${static}' and '${plugin}'")
endif()
message(STATUS "static library ${static} and plugin ${plugin}: ok")

mg_step("list the outside project's tests" COMMAND ${CTEST} -N -C ${CONFIG}
        WORKING_DIRECTORY ${build} OUTPUT_VARIABLE listed)
string(REGEX MATCHALL "ops\\.scaled_gelu_[a-z0-9_]+_cpu_f(32|64)_[a-z_]+" harness_tests "${listed}")
list(LENGTH harness_tests harness_count)
string(REGEX MATCH "Total Tests: ([0-9]+)" total "${listed}")
set(total ${CMAKE_MATCH_1})
if(harness_count LESS 4 OR NOT listed MATCHES "example_custom_op")
  mg_fail("the outside project's ctest should list the op harness over scaled_gelu (f32 and f64) "
          "and example_custom_op; it lists:\n${listed}")
endif()
message(STATUS "${harness_count} op harness tests of scaled_gelu among ${total} tests: ok")

mg_step("run the outside project's tests" COMMAND ${CTEST} -C ${CONFIG} --output-on-failure
        WORKING_DIRECTORY ${build} OUTPUT_VARIABLE ran)
# CTest 4 leaves out the ", 0 tests failed" of CTest 3's summary.
mg_expect_match("all ${total} tests passed" "${ran}"
                "100% tests passed(, 0 tests failed)? out of ${total}\n")
mg_expect_match("the harness ran scaled_gelu's gradient check" "${ran}"
                "ops\\.scaled_gelu_[a-z0-9_]+_cpu_f64_gradcheck [.]+ +Passed")

if(EXISTS ${PREFIX}/bin/minigraph)
  mg_step("the installed CLI gradchecks the plugin built outside"
          COMMAND ${PREFIX}/bin/minigraph --plugin ${plugin} gradcheck --op scaled_gelu
          OUTPUT_VARIABLE out)
  mg_expect_match("its report names scaled_gelu" "${out}" "scaled_gelu")
endif()
