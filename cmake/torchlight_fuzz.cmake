# The libFuzzer build (./torchlight build fuzz -> build/fuzz): clang with
# ASan+UBSan everywhere and SanitizerCoverage on every library, so the
# fuzzers in fuzz/ see edges inside the runtime, not only in the harness.
#
# Libraries get -fsanitize=fuzzer-no-link (instrumentation, no main); the
# fuzzer executables add -fsanitize=fuzzer (libFuzzer's main), see
# fuzz/CMakeLists.txt.

option(TORCHLIGHT_FUZZ "Build the libFuzzer targets in fuzz/ (needs clang)" OFF)

if(TORCHLIGHT_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID MATCHES "Clang")
    message(FATAL_ERROR "TORCHLIGHT_FUZZ needs clang (CC=clang-19 CXX=clang++-19), "
                        "not ${CMAKE_CXX_COMPILER_ID}")
  endif()
  # Recovery off: the first UB report is a crash libFuzzer saves. vptr needs
  # RTTI, which the runtime is built without.
  add_compile_options(-fsanitize=fuzzer-no-link,address,undefined -fno-sanitize=vptr
                      -fno-sanitize-recover=all -fno-omit-frame-pointer -g)
  add_link_options(-fsanitize=address,undefined)
  # Warnings are the GCC builds' job; clang's extra ones must not stop fuzzing.
  add_compile_options(-Wno-error)
endif()
