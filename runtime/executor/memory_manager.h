// MemoryManager: every piece of memory a Method uses, supplied by the caller.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/memory_allocator.h"
#include "runtime/core/result.h"
#include "runtime/core/span.h"

namespace torchlight {

/// The memory-planned arenas of one method: arena i holds the tensors whose
/// AllocationDetails.memory_id is i + 1. Sizes come from MethodMeta.
class PlannedMemory {
 public:
  /// `arenas` and the memory each entry points to must outlive this object.
  explicit PlannedMemory(Span<Span<uint8_t>> arenas) : arenas_(arenas) {}

  size_t num_arenas() const { return arenas_.size(); }
  Span<uint8_t> arena(size_t i) const { return arenas_[i]; }

  /// Address of [offset, offset + nbytes) in the arena of `memory_id`
  /// (1-based, as in the program). Errors: kInvalidProgram when the id or the
  /// range is outside the arenas given.
  Result<uint8_t*> locate(uint32_t memory_id, uint64_t offset, uint64_t nbytes) const;

 private:
  Span<Span<uint8_t>> arenas_;
};

struct MemoryManager {
  /// Values, tensor metadata and per-instruction tables of the method. Lives
  /// as long as the Method.
  MemoryAllocator* method_allocator = nullptr;
  /// Planned arenas; may be null for a method with no planned tensors.
  PlannedMemory* planned_memory = nullptr;
  /// Scratch for kernels and delegates, reset after every instruction. May be null.
  MemoryAllocator* temp_allocator = nullptr;
};

}  // namespace torchlight
