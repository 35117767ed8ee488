# Compiler settings shared by every target.
#
# The runtime and kernels build with -fno-exceptions -fno-rtti (see
# torchlight_runtime_target); tools, tests and the Python bindings may use
# both, since they link libraries (gtest, pybind11) that do.

set(CMAKE_CXX_STANDARD 17)
set(CMAKE_CXX_STANDARD_REQUIRED ON)
set(CMAKE_CXX_EXTENSIONS OFF)
set(CMAKE_POSITION_INDEPENDENT_CODE ON)
set(CMAKE_EXPORT_COMPILE_COMMANDS ON)

option(TORCHLIGHT_SANITIZE "Build with AddressSanitizer and UndefinedBehaviorSanitizer" OFF)
option(TORCHLIGHT_BUILD_TESTS "Build the gtest suites" ON)
# OFF keeps only error codes (runtime/core/status.h): smaller binaries, and
# no sentence saying what failed. For the smallest devices only.
option(TORCHLIGHT_ERROR_MESSAGES "Keep error messages (OFF: codes only)" ON)

# maybe-uninitialized stays a warning, not an error: GCC 14 reports it
# falsely for inlined lambdas at -O3 (the Release build), and the sanitizer
# build and tests are the real check. Clang (the fuzz build) has no such
# warning and would warn about the flag on every file.
add_compile_options(-Wall -Wextra -Werror -Wno-unused-parameter)
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU")
  add_compile_options(-Wno-error=maybe-uninitialized)
endif()

if(TORCHLIGHT_SANITIZE)
  # Recovery off: the first report fails the test instead of scrolling by.
  # vptr checks need RTTI, which the runtime is built without.
  add_compile_options(-fsanitize=address,undefined -fno-sanitize=vptr -fno-sanitize-recover=all
                      -fno-omit-frame-pointer)
  add_link_options(-fsanitize=address,undefined)
endif()

# Marks a library as part of the runtime proper: no exceptions, no RTTI.
function(torchlight_runtime_target target)
  target_compile_options(${target} PRIVATE -fno-exceptions -fno-rtti)
endfunction()

# torchlight_add_gtest(NAME SOURCES ... LIBS ...): one gtest binary, each of
# its tests registered with CTest.
function(torchlight_add_gtest name)
  if(NOT TORCHLIGHT_BUILD_TESTS)
    return()
  endif()
  cmake_parse_arguments(ARG "" "" "SOURCES;LIBS" ${ARGN})
  add_executable(${name} ${ARG_SOURCES})
  target_link_libraries(${name} PRIVATE ${ARG_LIBS} GTest::gtest GTest::gmock GTest::gtest_main)
  target_compile_definitions(${name} PRIVATE
    TORCHLIGHT_FIXTURES_DIR="${PROJECT_SOURCE_DIR}/tests/fixtures/upstream")
  # Prefixed so `ctest -R <binary>` selects one binary's tests.
  gtest_discover_tests(${name} TEST_PREFIX "${name}." DISCOVERY_TIMEOUT 120)
endfunction()
