// FreeableBuffer: bytes handed out by a DataLoader, with the function that
// gives them back. Move-only; freeing twice or after a move is a no-op, so a
// Program can release segment data as soon as load no longer needs it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "runtime/core/span.h"

namespace torchlight {

class FreeableBuffer {
 public:
  /// Called once with the context, data and size given at construction.
  using FreeFn = void (*)(void* context, void* data, size_t size);

  FreeableBuffer() = default;
  FreeableBuffer(const void* data, size_t size, FreeFn free_fn, void* context = nullptr)
      : data_(data), size_(size), free_fn_(free_fn), context_(context) {}
  FreeableBuffer(FreeableBuffer&& other) noexcept { *this = static_cast<FreeableBuffer&&>(other); }
  FreeableBuffer& operator=(FreeableBuffer&& other) noexcept {
    if (this != &other) {
      free();
      data_ = other.data_;
      size_ = other.size_;
      free_fn_ = other.free_fn_;
      context_ = other.context_;
      other.data_ = nullptr;
      other.size_ = 0;
      other.free_fn_ = nullptr;
    }
    return *this;
  }
  FreeableBuffer(const FreeableBuffer&) = delete;
  FreeableBuffer& operator=(const FreeableBuffer&) = delete;
  ~FreeableBuffer() { free(); }

  void free() {
    if (free_fn_ != nullptr) free_fn_(context_, const_cast<void*>(data_), size_);
    free_fn_ = nullptr;
    data_ = nullptr;
    size_ = 0;
  }

  const void* data() const { return data_; }
  size_t size() const { return size_; }
  Span<const uint8_t> bytes() const { return {static_cast<const uint8_t*>(data_), size_}; }

 private:
  const void* data_ = nullptr;
  size_t size_ = 0;
  FreeFn free_fn_ = nullptr;
  void* context_ = nullptr;
};

}  // namespace torchlight
