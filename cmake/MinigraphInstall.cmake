# `cmake --install` and a package config, so that an outside project can
#   find_package(minigraph) and link minigraph::minigraph.
include(CMakePackageConfigHelpers)
set(MINIGRAPH_CMAKE_DIR ${CMAKE_INSTALL_LIBDIR}/cmake/minigraph)

install(TARGETS minigraph EXPORT minigraphTargets
        LIBRARY DESTINATION ${CMAKE_INSTALL_LIBDIR}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR})
install(DIRECTORY framework/include/minigraph DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
install(DIRECTORY ops/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigraph/ops
        FILES_MATCHING PATTERN "*.h")
install(DIRECTORY models/ DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigraph/models
        FILES_MATCHING PATTERN "*.h")
install(FILES ${MINIGRAPH_GENERATED_DIR}/minigraph/ops.h ${MINIGRAPH_GENERATED_DIR}/minigraph/version.h
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/minigraph)
install(EXPORT minigraphTargets NAMESPACE minigraph:: DESTINATION ${MINIGRAPH_CMAKE_DIR})

configure_package_config_file(cmake/minigraphConfig.cmake.in
  ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfig.cmake INSTALL_DESTINATION ${MINIGRAPH_CMAKE_DIR})
write_basic_package_version_file(${CMAKE_CURRENT_BINARY_DIR}/minigraphConfigVersion.cmake
  COMPATIBILITY SameMinorVersion)
install(FILES ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfig.cmake
              ${CMAKE_CURRENT_BINARY_DIR}/minigraphConfigVersion.cmake
        DESTINATION ${MINIGRAPH_CMAKE_DIR})
