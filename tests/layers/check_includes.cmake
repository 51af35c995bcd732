# ctest layers_include_only_seen: each floor includes headers of its own floor and of the
# floors it sees only (cmake/MinigraphFloors.cmake: framework <- ops <- {models, optim};
# framework <- distributed; train sees all of them). The build already cannot find a header of
# a floor not seen (its generated folder is not on the include path); this names the offending
# file and line, and also catches an include through a floor's private folder names ("binary/binary.h",
# "layers/embedding.h") or a relative or absolute path.
#   cmake -DSOURCE_DIR=<repo> -P check_includes.cmake
cmake_minimum_required(VERSION 3.24)
include(${SOURCE_DIR}/cmake/MinigraphFloors.cmake)

# The names by which a floor's headers can be reached: minigraph/<floor>/ in the installed
# layout, and the floor's folder or one of its subfolders (ops/binary/, models/layers/, train/data/)
# as a private root or relative path.
foreach(floor IN LISTS MINIGRAPH_FLOORS)
  set(names_${floor} ${floor})
  file(GLOB children LIST_DIRECTORIES true RELATIVE ${SOURCE_DIR}/${floor} ${SOURCE_DIR}/${floor}/*)
  foreach(child IN LISTS children)
    if(IS_DIRECTORY ${SOURCE_DIR}/${floor}/${child})
      list(APPEND names_${floor} ${child})
    endif()
  endforeach()
endforeach()

set(violations "")
foreach(floor IN LISTS MINIGRAPH_FLOORS)
  minigraph_floors_below(${floor} seen)
  # What this floor must not include, as a regex on the text after `#include`: the umbrella
  # header, the CLI, and every floor it does not see.
  set(unseen_floors tools)
  set(unseen_names tools cli)
  foreach(other IN LISTS MINIGRAPH_FLOORS)
    if(NOT other STREQUAL floor AND NOT other IN_LIST seen)
      list(APPEND unseen_floors ${other})
      list(APPEND unseen_names ${names_${other}})
    endif()
  endforeach()
  list(REMOVE_ITEM unseen_names ${names_${floor}})  # a folder name both floors use is its own
  list(JOIN unseen_floors "|" floors_alternatives)
  list(JOIN unseen_names "|" names_alternatives)
  set(pattern "minigraph/(${floors_alternatives})[/.]|minigraph/minigraph\\.h|(^|[\"</])(${names_alternatives})/")

  file(GLOB_RECURSE files ${SOURCE_DIR}/${floor}/*.h ${SOURCE_DIR}/${floor}/*.cpp
       ${SOURCE_DIR}/${floor}/*.cu ${SOURCE_DIR}/${floor}/*.cuh)
  list(LENGTH files count)
  foreach(file IN LISTS files)
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include")
    foreach(include IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*" "" target "${include}")
      if(target MATCHES "${pattern}")
        file(RELATIVE_PATH where ${SOURCE_DIR} ${file})
        list(APPEND violations "${where}: ${include} (${floor} does not see it)")
      endif()
    endforeach()
  endforeach()
  list(JOIN seen ", " seen_text)
  message(STATUS "${floor}/: ${count} files checked; it sees: ${seen_text}")
endforeach()
if(violations)
  list(JOIN violations "\n  " shown)
  message(FATAL_ERROR "FAILED: includes of a floor not seen:\n  ${shown}")
endif()
message(STATUS "no floor includes a header of a floor it does not see: ok")
