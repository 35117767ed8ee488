// TestBackend: a tiny delegate backend that proves the delegation path end
// to end (Python preprocess -> .pte -> BackendRegistry -> execute). It runs
// element-wise float32 add, sub and mul over same-shaped tensors.
//
// Its partner is python/torchlight/backends/test_backend.py, which writes the
// blob. Blob layout (little-endian):
//
//   header, 28 bytes:  "TLTB", u32 version (= 1), u32 num_inputs,
//                      u32 num_outputs, u32 num_slots, u32 num_constants,
//                      u32 num_instructions
//   constants:         num_constants x (u32 slot, f32 value)
//   instructions:      num_instructions x (u32 opcode, u32 a, u32 b,
//                      u32 dst, f32 alpha); opcode 1 = add (a + alpha * b),
//                      2 = sub (a - alpha * b), 3 = mul (a * b)
//   outputs:           num_outputs x u32 slot
//
// Slots 0..num_inputs-1 are the delegate's inputs; a constant slot holds
// one number broadcast to every element; other slots are temporaries in
// the temp allocator. The compile spec "version" must be "1".
#pragma once

#include <cstdint>

#include "runtime/backend/backend_interface.h"
#include "runtime/backend/backend_registry.h"

namespace torchlight {

/// The id programs name this backend by (BackendDelegate.id).
inline constexpr const char* kTestBackendId = "TorchlightTestBackend";
inline constexpr uint32_t kTestBackendVersion = 1;

class TestBackend final : public BackendInterface {
 public:
  bool is_available() const override { return true; }

  /// Parses and checks the blob and copies it into the runtime allocator.
  /// Errors: kDelegateInvalidCompatibility (wrong magic, version or
  /// "version" compile spec), kInvalidProgram (sizes, slot indices, a slot
  /// read before it is written), kDelegateMemoryAllocationFailed.
  Result<DelegateHandle*> init(BackendInitContext& context, FreeableBuffer* processed,
                               Span<const CompileSpec> compile_specs) const override;

  /// Errors: kInvalidArgument (argument count, sizes), kInvalidType (not a
  /// float32 tensor), kDelegateMemoryAllocationFailed (no temp memory).
  Status execute(BackendExecutionContext& context, DelegateHandle* handle,
                 Span<EValue*> args) const override;
};

/// The process-wide TestBackend instance.
const TestBackend& test_backend();

/// Registers test_backend() under kTestBackendId. Errors: as
/// BackendRegistry::register_backend (duplicate, full).
Status register_test_backend(BackendRegistry& registry);

}  // namespace torchlight
