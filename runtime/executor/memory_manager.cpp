#include "runtime/executor/memory_manager.h"

namespace torchlight {

Result<uint8_t*> PlannedMemory::locate(uint32_t memory_id, uint64_t offset, uint64_t nbytes) const {
  TL_CHECK_OR_RETURN(memory_id >= 1 && memory_id <= arenas_.size(), Error::kInvalidProgram,
                     "planned memory id %u is out of range (%zu arenas given, ids start at 1)",
                     memory_id, arenas_.size());
  const Span<uint8_t> arena = arenas_[memory_id - 1];
  uint64_t end = 0;
  TL_CHECK_OR_RETURN(!__builtin_add_overflow(offset, nbytes, &end) && end <= arena.size(),
                     Error::kInvalidProgram,
                     "planned tensor at offset %llu (%llu bytes) runs past arena %u of %zu bytes",
                     static_cast<unsigned long long>(offset), static_cast<unsigned long long>(nbytes),
                     memory_id, arena.size());
  return arena.data() + offset;
}

}  // namespace torchlight
