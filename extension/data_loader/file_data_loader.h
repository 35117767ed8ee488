// FileDataLoader: reads byte ranges of a file into heap buffers with pread.
//
// Each load() allocates a fresh buffer (aligned to at least
// DataLoader::kMinAlignment) and copies the bytes in, so buffers stay valid
// after the loader is destroyed and the file may be edited later without
// affecting them. For zero-copy access use MmapDataLoader.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "runtime/core/data_loader.h"
#include "runtime/core/result.h"

namespace torchlight {

class FileDataLoader final : public DataLoader {
 public:
  /// Opens `path` for reading; its size is fixed at this point. `alignment`
  /// (a power of two) is the alignment of every returned buffer, raised to
  /// kMinAlignment if smaller. `path` is copied.
  ///
  /// Errors: kNotFound when the file does not exist ("cannot open '<path>':
  /// No such file or directory"); kAccessFailed when it cannot be opened or
  /// stat'ed, or is a directory; kInvalidArgument for a bad alignment.
  static Result<FileDataLoader> from(const char* path, size_t alignment = kMinAlignment);

  FileDataLoader(FileDataLoader&& other) noexcept;
  FileDataLoader& operator=(FileDataLoader&& other) noexcept;
  FileDataLoader(const FileDataLoader&) = delete;
  FileDataLoader& operator=(const FileDataLoader&) = delete;
  ~FileDataLoader() override;

  /// A new heap buffer holding bytes [offset, offset + size); freeing the
  /// FreeableBuffer releases it. A size-0 load returns an empty buffer
  /// (null data). Errors: kInvalidArgument when the range passes the end of
  /// the file (offset + size is checked without wrapping);
  /// kMemoryAllocationFailed when no buffer could be had; kAccessFailed when
  /// a read fails or the file has shrunk since from().
  Result<FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo& info) override;

  /// The file size in bytes, as seen by from().
  Result<size_t> size() const override { return file_size_; }

  /// The path given to from().
  const char* name() const override { return path_.c_str(); }

  size_t alignment() const { return alignment_; }

 private:
  FileDataLoader(int fd, std::string path, size_t file_size, size_t alignment)
      : fd_(fd), path_(std::move(path)), file_size_(file_size), alignment_(alignment) {}

  int fd_ = -1;  // -1 once moved from.
  std::string path_;
  size_t file_size_ = 0;
  size_t alignment_ = kMinAlignment;
};

}  // namespace torchlight
