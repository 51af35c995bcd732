# Op libraries: ops defined outside framework/ and ops/ (examples/custom_op is one).
#
# The same functions serve minigraph's own build (this file in the source tree's cmake/: they
# use the in-tree targets) and outside projects (this file installed in lib/cmake/minigraph/,
# included by `find_package(minigraph)`: they use the imported minigraph:: targets).
#
#   minigraph_add_op_library(<name> [DIRECTORY <dir>])
#     One line per op library. From the .cpp files in <dir> (default: the folder <name>;
#     relative to the current source folder, or absolute), which define extern "C"
#     minigraph_register_ops (minigraph/plugin.h), it builds
#       <name>             a static library for programs that link the ops in; its users
#                          include the library's headers as "<dir's name>/<header>.h";
#       <name>_plugin      libminigraph_<name>.so, for `minigraph --plugin PATH` and
#                          mg::load_op_library; it carries no minigraph code of its own;
#       <name>_op_harness  the op harness over the library's ops, registered with ctest as
#                          ops.<op>_<case>_<device>_<dtype>_<check>. In minigraph's own build:
#                          when its tests are built. Outside: unless BUILD_TESTING is OFF, from
#                          the installed minigraph::op_harness (needs GoogleTest; a warning
#                          says why when it cannot be built).
#
#   minigraph_add_op_harness(<target> <op_library>)
#     The op harness as an executable over a linked op library's ops.
#
#   minigraph_link_for_op_libraries(<target>)
#     Links all of minigraph into an executable and exports it, so that the op libraries it
#     loads at run time bind to this copy (the `minigraph` CLI does this).
include(GoogleTest)

# In the source tree, or installed? Only the source tree's cmake/ holds the config template.
function(_minigraph_op_library_context)
  if(EXISTS ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/minigraphConfig.cmake.in)
    set(in_tree TRUE PARENT_SCOPE)
    set(minigraph_target minigraph PARENT_SCOPE)
    set(harness_target minigraph_op_harness PARENT_SCOPE)
    cmake_path(SET main NORMALIZE
               ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/../tests/harness/op_library_main.cpp)
    set(harness_main ${main} PARENT_SCOPE)
  else()
    set(in_tree FALSE PARENT_SCOPE)
    set(minigraph_target minigraph::minigraph PARENT_SCOPE)
    set(harness_target minigraph::op_harness PARENT_SCOPE)
    set(harness_main ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/op_library_main.cpp PARENT_SCOPE)
  endif()
endfunction()

# minigraph's warning flags, in its own build only (outside, the project chooses its own).
function(_minigraph_op_library_warnings target)
  if(COMMAND minigraph_warnings)
    minigraph_warnings(${target})
  endif()
endfunction()

# Outside: loads the installed op harness (the package's op_harness component) when it is not
# loaded yet. Sets <out_var> to TRUE when minigraph::op_harness exists, else to the reason.
function(_minigraph_load_op_harness out_var)
  if(TARGET minigraph::op_harness)
    set(${out_var} TRUE PARENT_SCOPE)
    return()
  endif()
  set(targets ${CMAKE_CURRENT_FUNCTION_LIST_DIR}/minigraphOpHarnessTargets.cmake)
  if(NOT EXISTS ${targets})
    set(${out_var} "this minigraph was installed without its op harness (built with MINIGRAPH_BUILD_TESTS=OFF)" PARENT_SCOPE)
    return()
  endif()
  if(NOT TARGET GTest::gtest)
    find_package(GTest QUIET)
  endif()
  if(NOT TARGET GTest::gtest)
    set(${out_var} "GoogleTest was not found (Debian: libgtest-dev)" PARENT_SCOPE)
    return()
  endif()
  include(${targets})
  set(${out_var} TRUE PARENT_SCOPE)
endfunction()

function(minigraph_add_op_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DIRECTORY" "")
  if(NOT arg_DIRECTORY)
    set(arg_DIRECTORY ${name})
  endif()
  get_filename_component(dir ${arg_DIRECTORY} ABSOLUTE BASE_DIR ${CMAKE_CURRENT_SOURCE_DIR})
  get_filename_component(include_dir ${dir} DIRECTORY)  # "<dir's name>/<header>.h"
  file(GLOB sources CONFIGURE_DEPENDS ${dir}/*.cpp)
  if(NOT sources)
    message(FATAL_ERROR "minigraph_add_op_library(${name}): no .cpp files in ${dir}")
  endif()
  _minigraph_op_library_context()

  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${include_dir})
  target_link_libraries(${name} PUBLIC ${minigraph_target})
  _minigraph_op_library_warnings(${name})

  # Compiled against minigraph's headers only: linking minigraph in would give the plugin a
  # second registry, grad mode and allocator of its own.
  add_library(${name}_plugin MODULE ${sources})
  set_target_properties(${name}_plugin PROPERTIES OUTPUT_NAME minigraph_${name})
  target_compile_features(${name}_plugin PRIVATE cxx_std_20)
  target_include_directories(${name}_plugin PRIVATE ${include_dir}
    $<TARGET_PROPERTY:${minigraph_target},INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${name}_plugin PRIVATE
    $<TARGET_PROPERTY:${minigraph_target},INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(${name}_plugin PRIVATE fmt::fmt)
  _minigraph_op_library_warnings(${name}_plugin)

  if(in_tree)
    if(MINIGRAPH_BUILD_TESTS)
      minigraph_add_op_harness(${name}_op_harness ${name})
    endif()
  elseif(NOT DEFINED BUILD_TESTING OR BUILD_TESTING)
    _minigraph_load_op_harness(harness)
    if(harness STREQUAL "TRUE")
      minigraph_add_op_harness(${name}_op_harness ${name})
    else()
      message(WARNING "minigraph_add_op_library(${name}): no op harness tests: ${harness}")
    endif()
  endif()
endfunction()

function(minigraph_add_op_harness target op_library)
  _minigraph_op_library_context()
  add_executable(${target} ${harness_main})
  target_compile_definitions(${target} PRIVATE MINIGRAPH_OP_LIBRARY="${op_library}")
  target_link_libraries(${target} PRIVATE ${harness_target} ${op_library})
  _minigraph_op_library_warnings(${target})
  if(COMMAND minigraph_gtest_groups)  # in minigraph's own tree: a process per op
    minigraph_gtest_groups(${target} LABELS quick)
  else()
    gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60)
  endif()
endfunction()

function(minigraph_link_for_op_libraries target)
  _minigraph_op_library_context()
  get_target_property(type ${minigraph_target} TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    # Every object, not only those the executable calls: a library may call anything.
    target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,${minigraph_target}>")
  else()
    target_link_libraries(${target} PRIVATE ${minigraph_target})
  endif()
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
endfunction()
