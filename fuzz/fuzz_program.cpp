// Fuzz target: a whole .pte through Program::load, every method's load with
// the full kernel set and the test backend, and two executes.
#include <cstddef>
#include <cstdint>

#include "fuzz/known_defects.h"
#include "fuzz/program_runner.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (torchlight::fuzz::hits_known_defect(data, size)) return 0;
  torchlight::fuzz::load_and_run_program(data, size);
  return 0;
}
