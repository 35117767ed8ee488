// Loads a .pte from memory and runs every method the way an application
// would, inside bounds a fuzzer can afford. Shared by fuzz_program and the
// structure-aware variant.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight {
namespace fuzz {

/// Bounds on what one input may make the harness allocate or run. A file
/// that asks for more is rejected here, as an application with a memory
/// budget would, so a valid but huge program is not reported as a hang.
inline constexpr size_t kMaxPlannedBytes = 16u << 20;  // All arenas of one method.
inline constexpr size_t kMethodArenaBytes = 4u << 20;  // Values, tensors, tables.
inline constexpr size_t kTempArenaBytes = 4u << 20;    // Kernel scratch.
inline constexpr size_t kMaxInputBytes = 4u << 20;     // One unplanned input tensor.
inline constexpr uint64_t kMaxSteps = 10000;           // Instructions per execute().

/// Program::load, then for each method: MethodMeta, load_method with every
/// kernel and the test backend, inputs of ones, execute twice, read outputs.
/// Errors are expected and ignored; only crashes and sanitizer reports count.
void load_and_run_program(const uint8_t* data, size_t size);

}  // namespace fuzz
}  // namespace torchlight
