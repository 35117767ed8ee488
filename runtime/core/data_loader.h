// DataLoader: where a Program's bytes come from (a file, an mmap, memory).
// Implementations live in extension/data_loader; the core only sees this.
#pragma once

#include <cstddef>

#include "runtime/core/freeable_buffer.h"
#include "runtime/core/result.h"

namespace torchlight {

class DataLoader {
 public:
  /// What a load is for, so a loader may treat kinds differently (e.g. lock
  /// program data in memory but not constants).
  enum class SegmentKind { kProgram, kConstant, kBackend, kMutable, kNamedData };
  struct SegmentInfo {
    SegmentKind kind = SegmentKind::kProgram;
    size_t index = 0;               // Segment index, when there is one.
    const char* name = nullptr;     // Backend id or data key, when there is one.
  };

  /// Alignment a loader that copies (FileDataLoader) gives every buffer.
  /// Loaders that return file memory (mmap, buffer) are aligned as the file
  /// offset is; the .pte writer aligns segments and constants for them.
  static constexpr size_t kMinAlignment = 16;

  virtual ~DataLoader() = default;

  /// Bytes [offset, offset + size). Errors: kInvalidArgument when the range
  /// passes the end of the data, kAccessFailed when reading fails,
  /// kMemoryAllocationFailed when no buffer could be had.
  virtual Result<FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo& info) = 0;

  /// Total size of the underlying data in bytes.
  virtual Result<size_t> size() const = 0;

  /// A name for error messages, e.g. the file path. Never null.
  virtual const char* name() const { return "<memory>"; }
};

}  // namespace torchlight
