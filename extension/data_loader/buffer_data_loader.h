// BufferDataLoader: serves loads from memory the caller already holds (an
// embedded .pte, a buffer read by other means). Nothing is copied.
#pragma once

#include <cstddef>
#include <string>

#include "runtime/core/data_loader.h"
#include "runtime/core/result.h"

namespace torchlight {

class BufferDataLoader final : public DataLoader {
 public:
  /// Borrows `data` (`size` bytes), which must outlive the loader and every
  /// buffer it returns. `name` (copied) labels error messages. Returned
  /// pointers are aligned exactly as `data + offset` is.
  BufferDataLoader(const void* data, size_t size, const char* name = "<memory>")
      : data_(static_cast<const unsigned char*>(data)),
        size_(size),
        name_(name != nullptr ? name : "<memory>") {}

  /// A view of bytes [offset, offset + size); freeing it does nothing. A
  /// size-0 load returns an empty buffer (null data), as the other loaders do.
  /// Error: kInvalidArgument when the range passes the end of the buffer
  /// (offset + size is checked without wrapping).
  Result<FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo& info) override;

  Result<size_t> size() const override { return size_; }
  const char* name() const override { return name_.c_str(); }

 private:
  const unsigned char* data_;
  size_t size_;
  std::string name_;
};

}  // namespace torchlight
