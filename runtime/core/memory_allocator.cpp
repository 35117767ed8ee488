#include "runtime/core/memory_allocator.h"

namespace torchlight {

void* MemoryAllocator::allocate_from_buffer(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(base_) + used_;
  const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
  const size_t padding = aligned - start;
  size_t needed = 0;
  if (__builtin_add_overflow(padding, size, &needed) || needed > size_ - used_) return nullptr;
  used_ += needed;
  return reinterpret_cast<void*>(aligned);
}

}  // namespace torchlight
