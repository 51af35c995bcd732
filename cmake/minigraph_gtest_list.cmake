# gtest_list(OUT EXE FILTER): the full names (Suite.Test) of the tests of a GoogleTest binary
# that FILTER selects, in its order; a failed listing is a fatal error. Shared by the scripts
# that write and check the test groups (cmake/MinigraphTestGroups.cmake).
function(gtest_list out exe filter)
  execute_process(COMMAND ${exe} --gtest_list_tests --gtest_filter=${filter}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE listing ERROR_VARIABLE errors TIMEOUT 60)
  if(NOT rc STREQUAL "0")
    message(FATAL_ERROR "${exe} --gtest_list_tests --gtest_filter=${filter} failed (${rc}):\n"
                        "${listing}${errors}")
  endif()
  string(REPLACE ";" "\\;" listing "${listing}")
  string(REPLACE "\n" ";" lines "${listing}")
  set(names "")
  foreach(line IN LISTS lines)
    string(REGEX REPLACE " *#.*$" "" line "${line}")  # typed and value-parameterized tests
    if(line MATCHES "^([^ ].*\\.)$")
      set(suite ${CMAKE_MATCH_1})
    elseif(line MATCHES "^  ([^ ]+)$")
      list(APPEND names "${suite}${CMAKE_MATCH_1}")
    endif()
  endforeach()
  set(${out} ${names} PARENT_SCOPE)
endfunction()
