// Fuzz target: a whole .pte through Program::load, every method's load with
// the full kernel set and the test backend, and two executes.
#include <cstddef>
#include <cstdint>

#include "fuzz/program_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  torchlight::fuzz::load_and_run_program(data, size);
  return 0;
}
