#include "extension/llm/tokenizers/file_contents.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace torchlight {

Result<std::string> read_file_contents(const std::string& path, size_t max_bytes) {
  int fd;
  do {
    fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  } while (fd < 0 && errno == EINTR);
  if (fd < 0) {
    const int err = errno;
    return Status::error(err == ENOENT ? Error::kNotFound : Error::kAccessFailed,
                         "cannot open '%s': %s", path.c_str(), std::strerror(err));
  }
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    return Status::error(Error::kAccessFailed, "cannot stat '%s': %s", path.c_str(),
                         std::strerror(err));
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status::error(Error::kInvalidExternalData, "'%s' is not a regular file", path.c_str());
  }
  if (static_cast<uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return Status::error(Error::kInvalidExternalData,
                         "'%s' is %lld bytes, more than the %zu a tokenizer file may have",
                         path.c_str(), static_cast<long long>(st.st_size), max_bytes);
  }
  std::string data(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::read(fd, &data[done], data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int err = n < 0 ? errno : 0;
      ::close(fd);
      return Status::error(Error::kAccessFailed, "reading '%s' at offset %zu: %s", path.c_str(),
                           done, err != 0 ? std::strerror(err) : "unexpected end of file");
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

}  // namespace torchlight
