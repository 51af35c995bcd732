# ctest install_and_find_package: configures tests/consumer/ against the scratch install with
# find_package(minigraph), builds it and runs it. Checks that the package came from the
# install, that its only include directory is the install's include/, that the op_harness
# component loads, that every installed header compiles alone, and the program's result.
cmake_minimum_required(VERSION 3.24)  # policies of this script
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(MAKE_DIRECTORY ${WORK_DIR})
mg_configure_and_build(${CONSUMER_DIR} ${WORK_DIR}/build)

mg_package_dir(package)
file(REAL_PATH ${package} package)
file(REAL_PATH ${PREFIX}/include include)
mg_regex_escape(package_re ${package})
mg_regex_escape(include_re ${include})
mg_expect_match("package found in the scratch install" "${configure_output}"
                "consumer: minigraph_DIR=${package_re}\n")
mg_expect_match("the package's only include directory is ${include}" "${configure_output}"
                "consumer: include dirs=${include_re}\n")
mg_expect_match("component op_harness found" "${configure_output}"
                "consumer: op_harness component=TRUE\n")

file(GLOB objects ${WORK_DIR}/build/CMakeFiles/installed_headers.dir/headers/*.o
                  ${WORK_DIR}/build/CMakeFiles/installed_headers.dir/*/headers/*.o)
file(GLOB_RECURSE headers ${include}/*.h)
list(LENGTH objects compiled)
list(LENGTH headers installed)
if(NOT compiled EQUAL installed)
  mg_fail("${compiled} header translation units compiled, for ${installed} installed headers")
endif()
message(STATUS "each of the ${installed} installed headers compiles alone: ok")

mg_step("run the consumer" COMMAND ${WORK_DIR}/build/consumer OUTPUT_VARIABLE out)
mg_expect_match("consumer result" "${out}" "consumer: logits \\[1, 3, 13\\], ok")
