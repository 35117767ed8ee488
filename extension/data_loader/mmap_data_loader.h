// MmapDataLoader: zero-copy loads by mapping file ranges read-only.
//
// Alignment: a returned pointer is aligned exactly as its file offset is
// (mmap maps whole pages and the buffer points at the requested byte inside
// them). Data at offset 0 is page-aligned; segments of a .pte are aligned in
// the file, so they are aligned in memory too. A load at an offset that is
// not a multiple of DataLoader::kMinAlignment gives an equally unaligned
// pointer; use FileDataLoader when that matters.
//
// Mapped memory reflects the file: if the file is truncated while a buffer is
// mapped, touching the missing pages raises SIGBUS. Do not edit files that are
// in use.
#pragma once

#include <cstddef>
#include <string>
#include <utility>

#include "runtime/core/data_loader.h"
#include "runtime/core/result.h"

namespace torchlight {

class MmapDataLoader final : public DataLoader {
 public:
  /// Whether loaded ranges are locked into RAM (mlock) so they are never paged
  /// out during execution.
  enum class MlockConfig {
    kNoMlock,               // Never lock.
    kUseMlock,              // Lock; failure to lock fails the load.
    kUseMlockIgnoreErrors,  // Lock when allowed (RLIMIT_MEMLOCK); ignore failures.
  };

  /// Opens `path` for reading; its size is fixed at this point. `path` is
  /// copied. Errors: kNotFound when the file does not exist ("cannot open
  /// '<path>': No such file or directory"); kAccessFailed when it cannot be
  /// opened or stat'ed, or is a directory.
  static Result<MmapDataLoader> from(const char* path, MlockConfig mlock = MlockConfig::kNoMlock);

  MmapDataLoader(MmapDataLoader&& other) noexcept;
  MmapDataLoader& operator=(MmapDataLoader&& other) noexcept;
  MmapDataLoader(const MmapDataLoader&) = delete;
  MmapDataLoader& operator=(const MmapDataLoader&) = delete;
  ~MmapDataLoader() override;

  /// Maps the pages covering [offset, offset + size) (MAP_PRIVATE, read-only)
  /// and returns a buffer pointing at byte `offset`; freeing it unmaps them.
  /// The buffer stays valid after the loader is destroyed. A size-0 load maps
  /// nothing and returns an empty buffer (null data).
  ///
  /// Errors: kInvalidArgument when the range passes the end of the file
  /// (offset + size is checked without wrapping); kMemoryAllocationFailed
  /// when mmap runs out of memory (ENOMEM); kAccessFailed when mmap fails
  /// otherwise, or mlock fails under MlockConfig::kUseMlock.
  Result<FreeableBuffer> load(size_t offset, size_t size, const SegmentInfo& info) override;

  /// The file size in bytes, as seen by from().
  Result<size_t> size() const override { return file_size_; }

  /// The path given to from().
  const char* name() const override { return path_.c_str(); }

  MlockConfig mlock_config() const { return mlock_; }

 private:
  MmapDataLoader(int fd, std::string path, size_t file_size, size_t page_size, MlockConfig mlock)
      : fd_(fd),
        path_(std::move(path)),
        file_size_(file_size),
        page_size_(page_size),
        mlock_(mlock) {}

  int fd_ = -1;  // -1 once moved from.
  std::string path_;
  size_t file_size_ = 0;
  size_t page_size_ = 4096;
  MlockConfig mlock_ = MlockConfig::kNoMlock;
};

}  // namespace torchlight
