// MemoryAllocator: a bump allocator over a caller-owned buffer.
//
// The runtime core never calls malloc; everything it allocates comes from an
// allocator the caller passes in. allocate() is virtual so an extension can
// supply a heap-backed allocator (extension/memory) with the same interface.
#pragma once

#include <cstddef>
#include <cstdint>
#include <new>

#include "runtime/core/span.h"

namespace torchlight {

class MemoryAllocator {
 public:
  static constexpr size_t kDefaultAlignment = alignof(std::max_align_t);

  /// Allocates from `buffer`, which must outlive the allocator.
  explicit MemoryAllocator(Span<uint8_t> buffer) : base_(buffer.data()), size_(buffer.size()) {}
  MemoryAllocator(void* base, size_t size) : base_(static_cast<uint8_t*>(base)), size_(size) {}
  virtual ~MemoryAllocator() = default;
  MemoryAllocator(const MemoryAllocator&) = delete;
  MemoryAllocator& operator=(const MemoryAllocator&) = delete;

  /// `size` bytes aligned to `alignment` (a power of two), or null when the
  /// buffer is exhausted or `alignment` is not a power of two.
  ///
  /// Defined in the class so MemoryAllocator has no key function: its vtable
  /// and type_info are then emitted wherever needed, and a subclass compiled
  /// with RTTI (tests, tools) links against this -fno-rtti library.
  virtual void* allocate(size_t size, size_t alignment = kDefaultAlignment) {
    return allocate_from_buffer(size, alignment);
  }

  /// Forgets every allocation; the memory is reused from the start.
  virtual void reset() { used_ = 0; }

  /// `count` default-initialised Ts, or null (also on size overflow).
  template <typename T>
  T* allocate_array(size_t count) {
    size_t bytes = 0;
    if (__builtin_mul_overflow(count, sizeof(T), &bytes)) return nullptr;
    void* p = allocate(bytes == 0 ? 1 : bytes, alignof(T));
    return p == nullptr ? nullptr : new (p) T[count];
  }

  /// Bytes handed out (including alignment padding) and bytes available in
  /// total; heap-backed allocators report what they have reserved.
  virtual size_t used() const { return used_; }
  virtual size_t capacity() const { return size_; }

 protected:
  MemoryAllocator() = default;

 private:
  void* allocate_from_buffer(size_t size, size_t alignment);

  uint8_t* base_ = nullptr;
  size_t size_ = 0;
  size_t used_ = 0;
};

}  // namespace torchlight
