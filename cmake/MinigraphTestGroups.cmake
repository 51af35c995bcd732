# GoogleTest binaries as ctest tests, one per group of gtest tests instead of one per test: a
# process per op of the harness (all its cases, backends and dtypes), a process per test suite
# elsewhere. Starting a process, registering the ops and building their case tables cost about
# as much as a small case, and under AddressSanitizer several times more; the harness has
# over a thousand cases. A group runs with --gtest_brief, so a failure prints only the failing
# tests, each under its full name.
#
#   minigraph_gtest_groups(TARGET [LABELS label...] [TIMEOUT seconds])
#
# Once TARGET is built, cmake/minigraph_list_test_groups.cmake asks it for its tests
# (--gtest_list_tests) and writes the groups as ctest tests, as gtest_discover_tests does for
# single tests. Group names: `ops.<op>` for the harness's suite `ops` (an op's tests are those
# named `<op>_...`, less those of a longer op name such as `position_embedding_backward`), the
# suite's name for any other suite. `ctest -R` selects groups; a single gtest test runs with the
# binary's own --gtest_filter.
function(minigraph_gtest_groups target)
  cmake_parse_arguments(arg "" "TIMEOUT" "LABELS" ${ARGN})
  if(NOT arg_TIMEOUT)
    set(arg_TIMEOUT 600)
  endif()
  set(groups_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_groups.cmake)
  set(include_file ${CMAKE_CURRENT_BINARY_DIR}/${target}_groups_include.cmake)
  string(REPLACE ";" "," labels "${arg_LABELS}")
  # An output of its own, so it is written again when the binary or the scripts change.
  set(script ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/minigraph_list_test_groups.cmake)
  set(listing ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/minigraph_gtest_list.cmake)
  add_custom_command(
    OUTPUT ${groups_file}
    COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> -DOUT=${groups_file}
            -DWORKING_DIR=${CMAKE_CURRENT_BINARY_DIR} "-DLABELS=${labels}" -DTIMEOUT=${arg_TIMEOUT}
            -P ${script}
    DEPENDS ${target} ${script} ${listing}
    VERBATIM)
  add_custom_target(${target}_groups ALL DEPENDS ${groups_file})
  file(WRITE ${include_file}
       "if(EXISTS \"${groups_file}\")\n"
       "  include(\"${groups_file}\")\n"
       "else()\n"
       "  add_test(${target}_NOT_BUILT ${target}_NOT_BUILT)\n"
       "endif()\n")
  set_property(DIRECTORY APPEND PROPERTY TEST_INCLUDE_FILES ${include_file})
  # Every test in exactly one group (cmake/minigraph_check_test_groups.cmake).
  add_test(NAME test_groups_cover_${target}
           COMMAND ${CMAKE_COMMAND} -DEXE=$<TARGET_FILE:${target}> -DGROUPS_FILE=${groups_file}
                   -P ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/minigraph_check_test_groups.cmake)
  set_tests_properties(test_groups_cover_${target} PROPERTIES LABELS "${arg_LABELS}")
endfunction()
