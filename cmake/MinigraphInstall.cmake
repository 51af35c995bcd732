# `cmake --install`: the library, its public headers, a CMake package and a pkg-config file, so
# that an outside project can find_package(minigraph) and link minigraph::minigraph, add its
# own op libraries with minigraph_add_op_library (harness tests included), or build with
# `pkg-config --cflags --libs minigraph`.
#
# Installed include tree: everything under include/minigraph/, the only include root:
#   minigraph/minigraph.h          include/minigraph/: the umbrella, above every floor
#   minigraph/*.h                  framework/include/minigraph/: the core
#   minigraph/ops.h, version.h     generated at configure time
#   minigraph/ops/<op>/<op>.h      each built-in op's public header (ops/CMakeLists.txt)
#   minigraph/models/...           layers/init.h, layers/embedding.h, layers/linear.h,
#                                  layers/transformer.h, andrea/config.h, andrea/model.h
#   minigraph/optim/...            optimizer.h, sgd.h, adamw.h, clip.h, schedule.h
#   minigraph/distributed/...      communicator.h, mpi_communicator.h, nccl_communicator.h,
#                                  gradient_reducer.h
#   minigraph/train/...            data/tokenizer.h, data/dataset.h, data/corpus.h, checkpoint.h,
#                                  trainer.h, snapshot.h, similarity.h
#   minigraph/testing/op_harness.h the op harness (when tests are built)
include(CMakePackageConfigHelpers)
set(MINIGRAPH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/minigraph)

install(TARGETS minigraph EXPORT minigraphTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY framework/include/minigraph DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        FILES_MATCHING PATTERN "*.h")
install(FILES include/minigraph/minigraph.h
              ${MINIGRAPH_GENERATED_DIR}/framework/minigraph/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigraph)
install(EXPORT minigraphTargets NAMESPACE minigraph:: DESTINATION ${MINIGRAPH_CMAKE_DIR})

# The op harness (tests/CMakeLists.txt builds it with the tests): the package's op_harness
# component, in an export set of its own because it needs GoogleTest, which only its users
# must find. minigraph_add_op_library compiles op_library_main.cpp from the package folder.
set(MINIGRAPH_HAS_OP_HARNESS OFF)
if(TARGET minigraph_op_harness)
  set(MINIGRAPH_HAS_OP_HARNESS ON)
  install(TARGETS minigraph_op_harness EXPORT minigraphOpHarnessTargets
          ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
  install(DIRECTORY tests/harness/include/minigraph DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
          FILES_MATCHING PATTERN "*.h")
  install(EXPORT minigraphOpHarnessTargets NAMESPACE minigraph:: DESTINATION ${MINIGRAPH_CMAKE_DIR})
  install(FILES tests/harness/op_library_main.cpp DESTINATION ${MINIGRAPH_CMAKE_DIR})
endif()

configure_package_config_file(cmake/minigraphConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfig.cmake INSTALL_DESTINATION ${MINIGRAPH_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minigraphConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfigVersion.cmake
              cmake/MinigraphOpLibrary.cmake
        DESTINATION ${MINIGRAPH_CMAKE_DIR})

include(cmake/MinigraphPkgConfig.cmake)
