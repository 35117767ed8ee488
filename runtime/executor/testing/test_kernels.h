// Test-only kernels and a backend, so executor tests do not depend on the
// portable kernel library. Float32, same-shape (or 0-d other) only.
#pragma once

#include <vector>

#include "runtime/backend/backend_interface.h"
#include "runtime/executor/memory_manager.h"
#include "runtime/kernel/kernel_registry.h"

namespace torchlight::testing {

/// "aten::add.out" (self + alpha * other) and "aten::mul.out" for float32.
/// Outputs resize to self's sizes. A counter of calls is kept per kernel.
void register_test_kernels(KernelRegistry& registry);
int test_kernel_calls();

/// "TestAddBackend": init reads a 4-byte float bias from the blob and a
/// compile spec "scale" (1 byte); execute writes out = (in0 + in1) * scale
/// + bias for float32 tensors (args: in0, in1, out).
class TestAddBackend : public BackendInterface {
 public:
  bool is_available() const override { return available; }
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpec> compile_specs) const override;
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override;
  void destroy(DelegateHandle* handle) const override;

  bool available = true;
  mutable int inits = 0;
  mutable int executes = 0;
  mutable int destroys = 0;
};

/// Planned arenas and allocators for a method, sized generously.
struct TestMemory {
  explicit TestMemory(std::vector<size_t> arena_sizes, size_t method_bytes = 1 << 16);
  std::vector<std::vector<uint8_t>> arena_storage;
  std::vector<Span<uint8_t>> arenas;
  PlannedMemory planned;
  std::vector<uint8_t> method_storage;
  MemoryAllocator method_allocator;
  std::vector<uint8_t> temp_storage;
  MemoryAllocator temp_allocator;
  MemoryManager manager;
};

}  // namespace torchlight::testing
