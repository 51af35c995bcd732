# ctest layers_include_only_below: each floor includes headers of its own floor and those
# below it only (DESIGN: framework <- ops <- models <- optim <- dist <- train <- tools). The
# build already cannot find a header of a floor above (its generated folder is not on the
# include path); this names the offending file and line, and also catches an include that
# goes through a relative or absolute path.
#   cmake -DSOURCE_DIR=<repo> -P check_includes.cmake
cmake_minimum_required(VERSION 3.24)
file(STRINGS ${SOURCE_DIR}/ops/op_list.h op_lines REGEX "^MG_OP\\(")
set(op_folders common)
foreach(line IN LISTS op_lines)
  string(REGEX REPLACE "^MG_OP\\(([a-z0-9_]+)\\).*" "\\1" op "${line}")
  list(APPEND op_folders ${op})
endforeach()
list(JOIN op_folders "|" op_alternatives)
# What a floor must not include, as a regex on the text after `#include`.
set(above_framework "minigraph/(ops|models|optim|dist|train)[/.]|minigraph/minigraph\\.h|(^|[\"</])(ops|models|andrea|layers|optim|dist|train|${op_alternatives})/")
set(above_ops "minigraph/(models|optim|dist|train)/|minigraph/minigraph\\.h|(^|[\"</])(models|andrea|layers|optim|dist|train)/")
set(above_models "minigraph/(optim|dist|train)/|minigraph/minigraph\\.h|(^|[\"</])(optim|train|dist|tools|cli)/")
# optim/ may include the framework, the ops and the models; nothing of train/, dist/, tools/.
set(above_optim "minigraph/(train|dist|tools)/|minigraph/minigraph\\.h|(^|[\"</])(train|dist|tools|cli)/")
# dist may include the floors below it; not train (which trains through it) or tools.
set(above_dist "minigraph/(train|tools)/|minigraph/minigraph\\.h|(^|[\"</])(train|tools|cli)/")
# train may include every floor below it, dist too; not tools.
set(above_train "minigraph/tools/|minigraph/minigraph\\.h|(^|[\"</])(tools|cli)/")

set(violations "")
foreach(floor framework ops models optim dist train)
  file(GLOB_RECURSE files ${SOURCE_DIR}/${floor}/*.h ${SOURCE_DIR}/${floor}/*.cpp
       ${SOURCE_DIR}/${floor}/*.cu ${SOURCE_DIR}/${floor}/*.cuh)
  set(pattern "${above_${floor}}")
  set(count 0)
  foreach(file IN LISTS files)
    math(EXPR count "${count} + 1")
    file(STRINGS ${file} includes REGEX "^[ \t]*#[ \t]*include")
    foreach(include IN LISTS includes)
      string(REGEX REPLACE "^[ \t]*#[ \t]*include[ \t]*" "" target "${include}")
      if(target MATCHES "${pattern}")
        file(RELATIVE_PATH where ${SOURCE_DIR} ${file})
        list(APPEND violations "${where}: ${include}")
      endif()
    endforeach()
  endforeach()
  message(STATUS "${floor}/: ${count} files checked")
endforeach()
if(violations)
  list(JOIN violations "\n  " shown)
  message(FATAL_ERROR "FAILED: includes of a floor above:\n  ${shown}")
endif()
message(STATUS "no floor includes a header of a floor above it: ok")
