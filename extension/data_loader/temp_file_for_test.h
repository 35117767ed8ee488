// TempFile: a file under /tmp with given contents, removed on destruction.
// Test-only helper shared by the loader tests.
#pragma once

#include <stdlib.h>
#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

namespace torchlight {

class TempFile {
 public:
  explicit TempFile(const std::vector<uint8_t>& contents) {
    char name[] = "/tmp/torchlight_test_XXXXXX";
    const int fd = ::mkstemp(name);
    if (fd < 0) return;  // path() stays empty; the test's load then fails.
    path_ = name;
    size_t done = 0;
    while (done < contents.size()) {
      const ssize_t n = ::write(fd, contents.data() + done, contents.size() - done);
      if (n <= 0) break;
      done += static_cast<size_t>(n);
    }
    ::close(fd);
  }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  ~TempFile() {
    if (!path_.empty()) ::unlink(path_.c_str());
  }

  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

/// `size` bytes of a fixed pseudo-random pattern with no short period, so a
/// load from the wrong offset shows up as a mismatch.
inline std::vector<uint8_t> test_pattern(size_t size) {
  std::vector<uint8_t> bytes(size);
  uint32_t x = 0x12345678u;
  for (size_t i = 0; i < size; ++i) {
    x = x * 1664525u + 1013904223u;
    bytes[i] = static_cast<uint8_t>(x >> 24);
  }
  return bytes;
}

}  // namespace torchlight
