# ctest layers_link_as_designed: the floors' graph is the designed one (README, Layout), and each
# floor's library links exactly the floors that graph says it sees (a stray
# target_link_libraries, such as optim linking the models it does not use, would put their
# headers on its include path unnoticed).
#   cmake -DSOURCE_DIR=<repo> -DLINKS=<floor_links.txt> -P check_links.cmake
# LINKS: lines "<floor>: <the library's LINK_LIBRARIES>" (written by tests/layers/CMakeLists.txt).
cmake_minimum_required(VERSION 3.24)
include(${SOURCE_DIR}/cmake/MinigraphFloors.cmake)

# The test's own statement of the design, independent of the file it checks.
set(designed_framework "")
set(designed_ops framework)
set(designed_models ops)
set(designed_optim ops)
set(designed_distributed framework)
set(designed_train distributed models optim)

file(STRINGS ${LINKS} lines)
set(problems "")
foreach(floor IN LISTS MINIGRAPH_FLOORS)
  set(graph ${MINIGRAPH_FLOOR_SEES_${floor}})
  list(SORT graph)
  if(NOT "${graph}" STREQUAL "${designed_${floor}}")
    list(APPEND problems "cmake/MinigraphFloors.cmake: ${floor} sees '${graph}', the design says '${designed_${floor}}'")
  endif()
  set(linked "")
  foreach(line IN LISTS lines)
    if(line MATCHES "^${floor}: (.*)$")
      string(REPLACE "," ";" libraries "${CMAKE_MATCH_1}")
      foreach(library IN LISTS libraries)
        if(library MATCHES "^minigraph_([a-z]+)$")
          list(APPEND linked ${CMAKE_MATCH_1})
        endif()
      endforeach()
    endif()
  endforeach()
  list(SORT linked)
  if(NOT "${linked}" STREQUAL "${designed_${floor}}")
    list(APPEND problems "minigraph_${floor} links the floors '${linked}', the design says '${designed_${floor}}'")
  endif()
  message(STATUS "${floor} links: ${linked}")
endforeach()
if(problems)
  list(JOIN problems "\n  " shown)
  message(FATAL_ERROR "FAILED:\n  ${shown}")
endif()
message(STATUS "every floor links the floors it sees and no others: ok")
