#include "extension/data_loader/file_data_loader.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "extension/data_loader/huge_pages.h"
#include "extension/data_loader/load_range.h"

namespace torchlight {
namespace {

void free_heap_buffer(void* /*context*/, void* data, size_t /*size*/) { std::free(data); }

}  // namespace

Result<FileDataLoader> FileDataLoader::from(const char* path, size_t alignment) {
  TL_CHECK_OR_RETURN(path != nullptr, Error::kInvalidArgument, "FileDataLoader: path is null");
  TL_CHECK_OR_RETURN(alignment != 0 && (alignment & (alignment - 1)) == 0,
                     Error::kInvalidArgument,
                     "FileDataLoader for '%s': alignment %zu is not a power of two", path,
                     alignment);
  if (alignment < kMinAlignment) alignment = kMinAlignment;

  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    return Status::error(err == ENOENT ? Error::kNotFound : Error::kAccessFailed,
                         "cannot open '%s': %s", path, std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::error(Error::kAccessFailed, "cannot stat '%s': %s", path, std::strerror(err));
  }
  if (S_ISDIR(st.st_mode)) {
    ::close(fd);
    return Status::error(Error::kAccessFailed, "cannot read '%s': it is a directory", path);
  }
  return FileDataLoader(fd, path, static_cast<size_t>(st.st_size), alignment);
}

FileDataLoader::FileDataLoader(FileDataLoader&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      file_size_(other.file_size_),
      alignment_(other.alignment_) {
  other.fd_ = -1;
  other.file_size_ = 0;
}

FileDataLoader& FileDataLoader::operator=(FileDataLoader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    file_size_ = other.file_size_;
    alignment_ = other.alignment_;
    other.fd_ = -1;
    other.file_size_ = 0;
  }
  return *this;
}

FileDataLoader::~FileDataLoader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FreeableBuffer> FileDataLoader::load(size_t offset, size_t size,
                                            const SegmentInfo& /*info*/) {
  TL_CHECK_OR_RETURN(fd_ >= 0, Error::kInvalidState, "FileDataLoader was moved from");
  TL_RETURN_IF_ERROR(check_load_range(path_.c_str(), offset, size, file_size_));
  if (size == 0) return FreeableBuffer();

  // Weights-sized ranges start on a 2 MiB boundary, marked for huge pages
  // before the read touches them (huge_pages.h).
  const bool huge = want_huge_pages(size) && alignment_ < kHugePageBytes;
  const size_t alignment = huge ? kHugePageBytes : alignment_;
  void* buffer = nullptr;
  if (::posix_memalign(&buffer, alignment, size) != 0 || buffer == nullptr) {
    return Status::error(Error::kMemoryAllocationFailed,
                         "'%s': cannot allocate %zu bytes (alignment %zu) to load offset %zu",
                         path_.c_str(), size, alignment, offset);
  }
  if (huge) advise_huge_pages(buffer, size);
  // pread may return fewer bytes than asked (signals, >2 GiB requests), so
  // loop until the range is complete; 0 means the file shrank under us.
  size_t done = 0;
  while (done < size) {
    const ssize_t n = ::pread(fd_, static_cast<char*>(buffer) + done, size - done,
                              static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      std::free(buffer);
      if (n == 0) {
        return Status::error(Error::kAccessFailed,
                             "'%s': short read at offset %zu: got %zu of %zu bytes (file "
                             "truncated while open?)",
                             path_.c_str(), offset, done, size);
      }
      return Status::error(Error::kAccessFailed, "'%s': reading %zu bytes at offset %zu: %s",
                           path_.c_str(), size, offset, std::strerror(err));
    }
    done += static_cast<size_t>(n);
  }
  return FreeableBuffer(buffer, size, free_heap_buffer);
}

}  // namespace torchlight
