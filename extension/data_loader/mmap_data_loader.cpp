#include "extension/data_loader/mmap_data_loader.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstring>
#include <utility>

#include "extension/data_loader/load_range.h"

namespace torchlight {
namespace {

// The buffer points `data - page start` bytes into a mapping that starts at a
// page boundary, so the mapping is recovered from the buffer alone; the page
// size travels in the context pointer.
void unmap_buffer(void* context, void* data, size_t size) {
  const uintptr_t page_size = reinterpret_cast<uintptr_t>(context);
  const uintptr_t address = reinterpret_cast<uintptr_t>(data);
  const uintptr_t base = address & ~(page_size - 1);
  ::munmap(reinterpret_cast<void*>(base), size + (address - base));
}

}  // namespace

Result<MmapDataLoader> MmapDataLoader::from(const char* path, MlockConfig mlock) {
  TL_CHECK_OR_RETURN(path != nullptr, Error::kInvalidArgument, "MmapDataLoader: path is null");
  const long page_size = ::sysconf(_SC_PAGESIZE);
  TL_CHECK_OR_RETURN(page_size > 0 && (page_size & (page_size - 1)) == 0, Error::kInternal,
                     "MmapDataLoader: unexpected page size %ld", page_size);

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
  return MmapDataLoader(fd, path, static_cast<size_t>(st.st_size),
                        static_cast<size_t>(page_size), mlock);
}

MmapDataLoader::MmapDataLoader(MmapDataLoader&& other) noexcept
    : fd_(other.fd_),
      path_(std::move(other.path_)),
      file_size_(other.file_size_),
      page_size_(other.page_size_),
      mlock_(other.mlock_) {
  other.fd_ = -1;
  other.file_size_ = 0;
}

MmapDataLoader& MmapDataLoader::operator=(MmapDataLoader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = other.fd_;
    path_ = std::move(other.path_);
    file_size_ = other.file_size_;
    page_size_ = other.page_size_;
    mlock_ = other.mlock_;
    other.fd_ = -1;
    other.file_size_ = 0;
  }
  return *this;
}

MmapDataLoader::~MmapDataLoader() {
  if (fd_ >= 0) ::close(fd_);
}

Result<FreeableBuffer> MmapDataLoader::load(size_t offset, size_t size,
                                            const SegmentInfo& /*info*/) {
  TL_CHECK_OR_RETURN(fd_ >= 0, Error::kInvalidState, "MmapDataLoader was moved from");
  TL_RETURN_IF_ERROR(check_load_range(path_.c_str(), offset, size, file_size_));
  // mmap rejects length 0 (and an empty file has no pages to map).
  if (size == 0) return FreeableBuffer();

  const size_t map_offset = offset & ~(page_size_ - 1);
  const size_t lead = offset - map_offset;  // < page_size_, so no overflow below.
  const size_t map_size = lead + size;
  void* base = ::mmap(nullptr, map_size, PROT_READ, MAP_PRIVATE, fd_,
                      static_cast<off_t>(map_offset));
  if (base == MAP_FAILED) {
    const int err = errno;
    // ENOMEM means no address space or mapping slots: an allocation failure.
    return Status::error(err == ENOMEM ? Error::kMemoryAllocationFailed : Error::kAccessFailed,
                         "'%s': cannot map %zu bytes at offset %zu: %s", path_.c_str(), size,
                         offset, std::strerror(err));
  }
  if (mlock_ != MlockConfig::kNoMlock && ::mlock(base, map_size) != 0 &&
      mlock_ == MlockConfig::kUseMlock) {
    const int err = errno;
    ::munmap(base, map_size);
    return Status::error(Error::kAccessFailed,
                         "'%s': cannot mlock %zu bytes at offset %zu: %s (raise RLIMIT_MEMLOCK "
                         "or use MlockConfig::kUseMlockIgnoreErrors)",
                         path_.c_str(), size, offset, std::strerror(err));
  }
  // munmap also drops any lock, so freeing needs no munlock.
  return FreeableBuffer(static_cast<const uint8_t*>(base) + lead, size, unmap_buffer,
                        reinterpret_cast<void*>(static_cast<uintptr_t>(page_size_)));
}

}  // namespace torchlight
