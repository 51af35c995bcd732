# ctest install_to_scratch_prefix (the fixture of the other install_* tests): installs this
# build into a scratch prefix and checks the installed include tree:
#   - include/ holds minigraph/ only: nothing generic (common/, add/, andrea/ ...) on a
#     consumer's include path;
#   - exactly the public headers: the umbrella include/minigraph/minigraph.h,
#     framework/include/minigraph/*.h, the generated ops.h and version.h,
#     minigraph/ops/builtin_ops.h, minigraph/ops/<op>/<op>.h for each MG_OP, MG_FAMILY and MG_VIEW
#     of ops/op_list.h,
#     the three model
#     headers and minigraph/testing/op_harness.h; no internal one (ops/common, op_list.h,
#     *_cpu.h, *.cuh kernel headers);
#   - every #include of an installed header names a minigraph/... file that is installed.
cmake_minimum_required(VERSION 3.24)  # policies of this script
include(${CMAKE_CURRENT_LIST_DIR}/common.cmake)
file(REMOVE_RECURSE ${PREFIX} ${WORK_DIR})
file(MAKE_DIRECTORY ${WORK_DIR})
mg_step("install" COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${PREFIX} --config ${CONFIG})

set(include ${PREFIX}/include)
file(GLOB top RELATIVE ${include} ${include}/*)
message(STATUS "include/ holds: ${top}")
if(NOT top STREQUAL "minigraph")
  mg_fail("include/ must hold minigraph/ only, it holds: ${top}")
endif()

# The expected public headers, from the sources (not from the install rules).
set(expected minigraph/minigraph.h minigraph/ops.h minigraph/version.h
             minigraph/ops/builtin_ops.h minigraph/testing/op_harness.h
             minigraph/models/layers/init.h
             minigraph/models/layers/embedding.h minigraph/models/layers/linear.h
             minigraph/models/layers/dropout.h
             minigraph/models/layers/transformer.h minigraph/models/andrea/config.h
             minigraph/models/andrea/model.h minigraph/train/data/tokenizer.h
             minigraph/train/data/dataset.h minigraph/train/data/corpus.h
             minigraph/train/checkpoint.h minigraph/train/trainer.h
             minigraph/train/similarity.h minigraph/train/snapshot.h
             minigraph/ops/loss_reduction.h)
file(GLOB optim_headers RELATIVE ${TOP_SOURCE_DIR} ${TOP_SOURCE_DIR}/optim/*.h
     ${TOP_SOURCE_DIR}/distributed/*.h)
foreach(header IN LISTS optim_headers)
  list(APPEND expected minigraph/${header})
endforeach()
file(GLOB framework_headers RELATIVE ${TOP_SOURCE_DIR}/framework/include
     ${TOP_SOURCE_DIR}/framework/include/minigraph/*.h)
list(APPEND expected ${framework_headers})
file(STRINGS ${TOP_SOURCE_DIR}/ops/op_list.h ops REGEX "^MG_(OP|FAMILY|VIEW)\\(")
foreach(line IN LISTS ops)
  string(REGEX REPLACE "^MG_(OP|FAMILY|VIEW)\\(([a-z0-9_]+)\\).*" "\\2" op "${line}")
  list(APPEND expected minigraph/ops/${op}/${op}.h)
endforeach()
list(SORT expected)

file(GLOB_RECURSE installed RELATIVE ${include} ${include}/*)
list(SORT installed)
string(REPLACE ";" "\n  " shown "${installed}")
message(STATUS "installed include tree:\n  ${shown}")

set(internal "")
foreach(path IN LISTS installed)
  if(path MATCHES "/common/|op_list\\.h$|_cpu\\.h$|\\.cuh$|_cuda\\.h$|kernel")
    list(APPEND internal ${path})
  endif()
endforeach()
if(internal)
  mg_fail("internal headers were installed: ${internal}")
endif()
set(unexpected ${installed})
list(REMOVE_ITEM unexpected ${expected})
set(missing ${expected})
list(REMOVE_ITEM missing ${installed})
if(unexpected OR missing)
  mg_fail("installed headers differ from the public ones:\n  not public, but installed: ${unexpected}\n"
          "  public, but not installed: ${missing}")
endif()
list(LENGTH installed count)
message(STATUS "the ${count} installed headers are exactly the public ones: ok")

# Every include of another minigraph header resolves inside the install.
set(bad "")
foreach(path IN LISTS installed)
  file(STRINGS ${include}/${path} lines REGEX "^[ \t]*#[ \t]*include")
  foreach(line IN LISTS lines)
    if(line MATCHES "#[ \t]*include[ \t]*\"([^\"]+)\"")
      set(target ${CMAKE_MATCH_1})
    elseif(line MATCHES "#[ \t]*include[ \t]*<(minigraph/[^>]+)>")
      set(target ${CMAKE_MATCH_1})
    else()
      continue()  # a system or third-party header (<vector>, <fmt/format.h>, <gtest/gtest.h>)
    endif()
    if(NOT target MATCHES "^minigraph/" OR NOT EXISTS ${include}/${target})
      list(APPEND bad "${path}: ${line}")
    endif()
  endforeach()
endforeach()
if(bad)
  string(REPLACE ";" "\n  " bad "${bad}")
  mg_fail("installed headers include what the install does not have at minigraph/...:\n  ${bad}")
endif()
message(STATUS "every include in the installed headers resolves to an installed minigraph/ header: ok")

mg_package_dir(package)
foreach(file minigraphConfig.cmake minigraphTargets.cmake minigraphOpHarnessTargets.cmake
             MinigraphOpLibrary.cmake op_library_main.cpp)
  if(NOT EXISTS ${package}/${file})
    mg_fail("the package has no ${file} in ${package}")
  endif()
endforeach()
message(STATUS "the CMake package in ${package} has the op harness and minigraph_add_op_library: ok")
