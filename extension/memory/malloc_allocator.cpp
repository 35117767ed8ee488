#include "extension/memory/malloc_allocator.h"

#include <cstdlib>

namespace torchlight {

MallocAllocator::MallocAllocator(size_t chunk_size)
    : chunk_size_(chunk_size == 0 ? 1 : chunk_size) {}

MallocAllocator::~MallocAllocator() { reset(); }

void MallocAllocator::reset() {
  for (const Chunk& chunk : chunks_) std::free(chunk.data);
  chunks_.clear();
  cursor_ = nullptr;
  end_ = nullptr;
  allocated_ = 0;
  reserved_ = 0;
}

void* MallocAllocator::bump(size_t size, size_t alignment) {
  if (cursor_ == nullptr) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(cursor_);
  const uintptr_t aligned = (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
  const size_t available = static_cast<size_t>(end_ - cursor_);
  const size_t padding = aligned - start;
  if (padding > available || size > available - padding) return nullptr;
  cursor_ += padding + size;
  allocated_ += padding + size;
  return reinterpret_cast<void*>(aligned);
}

uint8_t* MallocAllocator::new_chunk(size_t size) {
  auto* data = static_cast<uint8_t*>(std::malloc(size));
  if (data == nullptr) return nullptr;
  chunks_.push_back({data, size});
  reserved_ += size;
  return data;
}

void* MallocAllocator::allocate(size_t size, size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) return nullptr;
  if (size == 0) size = 1;
  if (void* p = bump(size, alignment)) return p;

  // Worst-case padding is alignment - 1 bytes, whatever malloc returns.
  size_t needed = 0;
  if (__builtin_add_overflow(size, alignment - 1, &needed)) return nullptr;

  if (needed > chunk_size_ / 2) {
    // A dedicated chunk; the current small-object chunk stays in use.
    uint8_t* data = new_chunk(needed);
    if (data == nullptr) return nullptr;
    const uintptr_t start = reinterpret_cast<uintptr_t>(data);
    const uintptr_t aligned =
        (start + alignment - 1) & ~(static_cast<uintptr_t>(alignment) - 1);
    allocated_ += (aligned - start) + size;
    return reinterpret_cast<void*>(aligned);
  }
  uint8_t* data = new_chunk(chunk_size_);
  if (data == nullptr) return nullptr;
  cursor_ = data;
  end_ = data + chunk_size_;
  return bump(size, alignment);  // Fits: needed <= chunk_size_ / 2.
}

}  // namespace torchlight
