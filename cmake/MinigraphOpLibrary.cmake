# Op libraries: ops defined outside framework/ and ops/ (examples/custom_op is one).
#
#   minigraph_add_op_library(<name> [DIRECTORY <dir>])
#     One line per op library. From the .cpp files in <dir> (default: the folder <name>),
#     which define extern "C" minigraph_register_ops (minigraph/plugin.h), it builds
#       <name>             a static library for programs that link the ops in;
#       <name>_plugin      libminigraph_<name>.so, for `minigraph --plugin PATH` and
#                          mg::load_op_library; it carries no minigraph code of its own;
#       <name>_op_harness  (when tests are built) the op harness over the library's ops,
#                          registered with ctest as ops.<op>_<case>_<device>_<dtype>_<check>.
#
#   minigraph_add_op_harness(<target> <op_library>)
#     The op harness as an executable over a linked op library's ops.
#
#   minigraph_link_for_op_libraries(<target>)
#     Links all of minigraph into an executable and exports it, so that the op libraries it
#     loads at run time bind to this copy (the `minigraph` CLI does this).
include(GoogleTest)

function(minigraph_add_op_library name)
  cmake_parse_arguments(PARSE_ARGV 1 arg "" "DIRECTORY" "")
  if(NOT arg_DIRECTORY)
    set(arg_DIRECTORY ${name})
  endif()
  file(GLOB sources CONFIGURE_DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/${arg_DIRECTORY}/*.cpp)
  if(NOT sources)
    message(FATAL_ERROR "minigraph_add_op_library(${name}): no .cpp files in ${arg_DIRECTORY}")
  endif()

  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PUBLIC ${CMAKE_CURRENT_SOURCE_DIR})
  target_link_libraries(${name} PUBLIC minigraph::minigraph)
  minigraph_warnings(${name})

  # Compiled against minigraph's headers only: linking minigraph in would give the plugin a
  # second registry, grad mode and allocator of its own.
  add_library(${name}_plugin MODULE ${sources})
  set_target_properties(${name}_plugin PROPERTIES OUTPUT_NAME minigraph_${name})
  target_include_directories(${name}_plugin PRIVATE ${CMAKE_CURRENT_SOURCE_DIR}
    $<TARGET_PROPERTY:minigraph,INTERFACE_INCLUDE_DIRECTORIES>)
  target_compile_definitions(${name}_plugin PRIVATE
    $<TARGET_PROPERTY:minigraph,INTERFACE_COMPILE_DEFINITIONS>)
  target_link_libraries(${name}_plugin PRIVATE fmt::fmt)
  minigraph_warnings(${name}_plugin)

  if(MINIGRAPH_BUILD_TESTS)
    minigraph_add_op_harness(${name}_op_harness ${name})
  endif()
endfunction()

function(minigraph_add_op_harness target op_library)
  add_executable(${target} ${PROJECT_SOURCE_DIR}/tests/harness/op_library_main.cpp)
  target_compile_definitions(${target} PRIVATE MINIGRAPH_OP_LIBRARY="${op_library}")
  target_link_libraries(${target} PRIVATE minigraph_op_harness ${op_library})
  minigraph_warnings(${target})
  gtest_discover_tests(${target} DISCOVERY_TIMEOUT 60)
endfunction()

function(minigraph_link_for_op_libraries target)
  get_target_property(type minigraph TYPE)
  if(type STREQUAL "STATIC_LIBRARY")
    # Every object, not only those the executable calls: a library may call anything.
    target_link_libraries(${target} PRIVATE "$<LINK_LIBRARY:WHOLE_ARCHIVE,minigraph>")
  else()
    target_link_libraries(${target} PRIVATE minigraph)
  endif()
  set_target_properties(${target} PROPERTIES ENABLE_EXPORTS ON)
endfunction()
