// MallocAllocator: a MemoryAllocator backed by the heap, for hosts where a
// fixed arena is a nuisance (tools, tests, the Module extension).
//
// It hands out memory from malloc'ed chunks, bump-allocating within a chunk
// and starting a new one when a request does not fit, so it only fails when
// malloc does. Memory is released all at once, by reset() or destruction.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "runtime/core/memory_allocator.h"

namespace torchlight {

class MallocAllocator final : public MemoryAllocator {
 public:
  static constexpr size_t kDefaultChunkSize = 64 * 1024;

  /// Chunks hold `chunk_size` bytes (at least 1); a request larger than half
  /// a chunk gets a chunk of its own, so big tensors don't waste the rest of
  /// the current chunk.
  explicit MallocAllocator(size_t chunk_size = kDefaultChunkSize);
  ~MallocAllocator() override;

  /// `size` bytes aligned to `alignment` (a power of two). A size of 0 gets a
  /// distinct 1-byte allocation. Null only for a bad alignment, when
  /// size + alignment overflows, or when malloc fails.
  void* allocate(size_t size, size_t alignment = kDefaultAlignment) override;

  /// Frees every chunk; earlier pointers become invalid.
  void reset() override;

  /// Bytes handed out since the last reset, including alignment padding.
  size_t allocated_bytes() const { return allocated_; }
  /// Bytes obtained from malloc and not yet freed.
  size_t reserved_bytes() const { return reserved_; }
  size_t used() const override { return allocated_; }
  size_t capacity() const override { return reserved_; }
  size_t chunk_count() const { return chunks_.size(); }

 private:
  struct Chunk {
    uint8_t* data;
    size_t size;
  };

  // Bump-allocates from [cursor_, end_) or returns null when it doesn't fit.
  void* bump(size_t size, size_t alignment);
  // mallocs a chunk of `size` bytes; null when malloc fails.
  uint8_t* new_chunk(size_t size);

  size_t chunk_size_;
  std::vector<Chunk> chunks_;
  uint8_t* cursor_ = nullptr;  // Free space of the current small-object chunk.
  uint8_t* end_ = nullptr;
  size_t allocated_ = 0;
  size_t reserved_ = 0;
};

}  // namespace torchlight
