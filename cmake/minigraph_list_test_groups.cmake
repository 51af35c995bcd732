# Run after a GoogleTest binary is built (cmake/MinigraphTestGroups.cmake): lists its tests and
# writes OUT, a ctest file with one test per group. A group in which no test passed and tests
# were skipped (the CUDA tests without a GPU) counts as skipped; one whose tests all failed
# counts as failed (a skip pattern of "0 passed" alone once reported such a group as skipped).
#   cmake -DEXE=... -DOUT=... -DWORKING_DIR=... -DLABELS=a,b -DTIMEOUT=s -P this
cmake_minimum_required(VERSION 3.24)

include(${CMAKE_CURRENT_LIST_DIR}/minigraph_gtest_list.cmake)  # gtest_list

# Suites in order of appearance, and each suite's test names.
gtest_list(names ${EXE} "*")
set(suites "")
foreach(name IN LISTS names)
  string(FIND "${name}" "." dot)
  string(SUBSTRING "${name}" 0 ${dot} suite)
  math(EXPR dot "${dot} + 1")
  string(SUBSTRING "${name}" ${dot} -1 test)
  if(NOT suite IN_LIST suites)
    list(APPEND suites ${suite})
    set(tests_${suite} "")
  endif()
  list(APPEND tests_${suite} ${test})
endforeach()

set(text "")
function(add_group name filter)
  string(REPLACE "," ";" labels "${LABELS}")
  string(APPEND text
         "add_test([==[${name}]==] [==[${EXE}]==] [==[--gtest_filter=${filter}]==] --gtest_brief=1)\n"
         "set_tests_properties([==[${name}]==] PROPERTIES WORKING_DIRECTORY [==[${WORKING_DIR}]==]"
         " TIMEOUT ${TIMEOUT} LABELS [==[${labels}]==]"
         " SKIP_REGULAR_EXPRESSION [==[\\[  PASSED  \\] 0 tests\\.\n\\[  SKIPPED \\]]==])\n")
  set(text "${text}" PARENT_SCOPE)
endfunction()

foreach(suite IN LISTS suites)
  if(NOT suite STREQUAL "ops")
    add_group(${suite} "${suite}.*")
    continue()
  endif()
  # The harness: every op has the test <op>_complete. A test belongs to the longest op name it
  # starts with, so position_embedding leaves position_embedding_backward's tests out
  # (test_groups_cover_<binary> checks that each test is in exactly one group).
  set(ops "")
  foreach(test IN LISTS tests_ops)
    if(test MATCHES "^(.+)_complete$")
      list(APPEND ops ${CMAKE_MATCH_1})
    endif()
  endforeach()
  foreach(op IN LISTS ops)
    set(filter "ops.${op}_*")
    set(longer "")
    foreach(other IN LISTS ops)
      string(FIND "${other}" "${op}_" at)
      if(at EQUAL 0)
        list(APPEND longer "ops.${other}_*")
      endif()
    endforeach()
    if(longer)
      list(JOIN longer ":" longer)
      set(filter "${filter}-${longer}")
    endif()
    add_group(ops.${op} "${filter}")
  endforeach()
endforeach()
file(WRITE ${OUT} "${text}")
