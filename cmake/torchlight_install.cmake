# `cmake --install`: headers, static libraries, a CMake package
# (find_package(Torchlight CONFIG)) and a pkg-config file (torchlight.pc).
#
# The package is written by hand (cmake/TorchlightConfig.cmake.in) rather than
# exported with install(EXPORT): the build targets carry source-tree include
# paths and private helper targets (generated schema headers) that an install
# must not name, and the hand-written file keeps the public target names
# stable however the build is split into libraries.

include(GNUInstallDirs)
include(CMakePackageConfigHelpers)

# One version for the Python and C++ packages: python/pyproject.toml's.
file(STRINGS ${PROJECT_SOURCE_DIR}/python/pyproject.toml torchlight_version_line
     REGEX "^version *= *\"[0-9.]+\"")
string(REGEX MATCH "[0-9]+\\.[0-9]+\\.[0-9]+" TORCHLIGHT_PACKAGE_VERSION "${torchlight_version_line}")

# The static libraries an application links, in a valid link order (each
# after every library that uses it); torchlight.pc lists them in this order.
set(TORCHLIGHT_INSTALLED_LIBRARIES
  torchlight_llm_runner
  torchlight_llm_tokenizers
  torchlight_llm_sampler
  torchlight_module_defaults
  torchlight_module
  torchlight_executor
  torchlight_data_loader
  torchlight_memory
  torchlight_kernels
  torchlight_portable_kernels
  torchlight_optimized_kernels
  torchlight_portable_ops
  torchlight_llm_kernels
  torchlight_xnnpack_backend
  torchlight_quantized_kernels
  torchlight_kernel_util
  torchlight_portable_util
  torchlight_optimized_conv
  torchlight_optimized_fused
  torchlight_optimized_gemm
  torchlight_threadpool
  torchlight_npy
  torchlight_tensor
  torchlight_core)

# The package file imports each library by hand; one added here and not
# there would install but be unreachable through find_package.
file(READ ${PROJECT_SOURCE_DIR}/cmake/TorchlightConfig.cmake.in torchlight_config_text)
foreach(lib ${TORCHLIGHT_INSTALLED_LIBRARIES})
  if(NOT torchlight_config_text MATCHES "torchlight_import\\(${lib}[ \n)]")
    message(FATAL_ERROR "cmake/TorchlightConfig.cmake.in does not import ${lib}, "
                        "which cmake/torchlight_install.cmake installs")
  endif()
endforeach()

install(TARGETS ${TORCHLIGHT_INSTALLED_LIBRARIES}
        ARCHIVE DESTINATION ${CMAKE_INSTALL_LIBDIR}
        COMPONENT torchlight)

# Headers keep their repository-relative paths ("runtime/core/evalue.h")
# under include/torchlight; upstream's spellings (<executorch/...>) go
# directly under include. Tests, test helpers, headers that need the
# generated flatbuffer schema (never included by a public header) and
# per-ISA implementation fragments (*_impl.h) stay out; the test checks that every
# installed header compiles on its own.
set(torchlight_header_dirs runtime extension kernels backends/xnnpack)
foreach(dir ${torchlight_header_dirs})
  get_filename_component(parent "${dir}" DIRECTORY)
  install(DIRECTORY ${PROJECT_SOURCE_DIR}/${dir}
          DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}/torchlight/${parent}
          COMPONENT torchlight
          FILES_MATCHING PATTERN "*.h" PATTERN "*.def"
          PATTERN "*_test.h" EXCLUDE
          PATTERN "*_test_util.h" EXCLUDE
          PATTERN "payload_builder.h" EXCLUDE
          PATTERN "*_impl.h" EXCLUDE
          PATTERN "testing" EXCLUDE
          PATTERN "test" EXCLUDE
          PATTERN "conformance" EXCLUDE
          PATTERN "plan_unions.h" EXCLUDE)
endforeach()
install(DIRECTORY ${PROJECT_SOURCE_DIR}/compat/include/executorch
        DESTINATION ${CMAKE_INSTALL_INCLUDEDIR}
        COMPONENT torchlight)

# The product CLI, for users who install rather than run from the checkout.
install(TARGETS torchlight_cli RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR} COMPONENT torchlight)

# System libraries the package links: the installed config searches for them
# by name, with the directories this build found them in as hints.
get_filename_component(TORCHLIGHT_XNNPACK_LIB_DIR "${TORCHLIGHT_XNNPACK_LIB}" DIRECTORY)
get_filename_component(TORCHLIGHT_PTHREADPOOL_LIB_DIR "${TORCHLIGHT_PTHREADPOOL_LIB}" DIRECTORY)

set(torchlight_cmake_dir ${CMAKE_INSTALL_LIBDIR}/cmake/Torchlight)
configure_package_config_file(
  ${PROJECT_SOURCE_DIR}/cmake/TorchlightConfig.cmake.in
  ${PROJECT_BINARY_DIR}/cmake/TorchlightConfig.cmake
  INSTALL_DESTINATION ${torchlight_cmake_dir}
  PATH_VARS CMAKE_INSTALL_INCLUDEDIR CMAKE_INSTALL_LIBDIR)
write_basic_package_version_file(
  ${PROJECT_BINARY_DIR}/cmake/TorchlightConfigVersion.cmake
  VERSION ${TORCHLIGHT_PACKAGE_VERSION}
  COMPATIBILITY SameMinorVersion)
install(FILES ${PROJECT_BINARY_DIR}/cmake/TorchlightConfig.cmake
              ${PROJECT_BINARY_DIR}/cmake/TorchlightConfigVersion.cmake
        DESTINATION ${torchlight_cmake_dir}
        COMPONENT torchlight)

# pkg-config: paths relative to the .pc file (${pcfiledir}), so the install
# can be moved or made with `cmake --install --prefix` to any directory.
file(RELATIVE_PATH TORCHLIGHT_PC_PREFIX_FROM_PCDIR
     "/${CMAKE_INSTALL_LIBDIR}/pkgconfig" "/")
string(REGEX REPLACE "/$" "" TORCHLIGHT_PC_PREFIX_FROM_PCDIR "${TORCHLIGHT_PC_PREFIX_FROM_PCDIR}")
# Only directories the linker does not search already get a -L.
function(torchlight_pc_system_lib out lib_path)
  get_filename_component(name "${lib_path}" NAME_WE)
  get_filename_component(dir "${lib_path}" DIRECTORY)
  string(REGEX REPLACE "^lib" "" name "${name}")
  set(flags "-l${name}")
  if(NOT dir IN_LIST CMAKE_CXX_IMPLICIT_LINK_DIRECTORIES)
    set(flags "-L${dir} ${flags}")
  endif()
  set(${out} "${flags}" PARENT_SCOPE)
endfunction()
torchlight_pc_system_lib(xnnpack_flags "${TORCHLIGHT_XNNPACK_LIB}")
torchlight_pc_system_lib(pthreadpool_flags "${TORCHLIGHT_PTHREADPOOL_LIB}")
set(TORCHLIGHT_PC_LIBS "")
foreach(lib ${TORCHLIGHT_INSTALLED_LIBRARIES})
  string(REGEX REPLACE "^lib" "" short "${lib}")
  string(APPEND TORCHLIGHT_PC_LIBS " -l${short}")
  # The XNNPACK backend and the thread pool need their system libraries
  # before the libraries after them (tensor, core) are scanned.
  if(lib STREQUAL "torchlight_threadpool")
    string(APPEND TORCHLIGHT_PC_LIBS " ${xnnpack_flags} ${pthreadpool_flags}")
  endif()
endforeach()
string(APPEND TORCHLIGHT_PC_LIBS " -pthread")
string(STRIP "${TORCHLIGHT_PC_LIBS}" TORCHLIGHT_PC_LIBS)
configure_file(${PROJECT_SOURCE_DIR}/torchlight.pc.in ${PROJECT_BINARY_DIR}/torchlight.pc @ONLY)
install(FILES ${PROJECT_BINARY_DIR}/torchlight.pc
        DESTINATION ${CMAKE_INSTALL_LIBDIR}/pkgconfig
        COMPONENT torchlight)
