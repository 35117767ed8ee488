// tl_platform_release_resident only advises: whatever the OS does with the
// pages, the memory reads back unchanged, for heap, for a read-only mapped
// file (the two places a program's weights live) and for a private file
// mapping written to (whose pages are no longer the file's). On Linux the
// read-only file's pages also leave this process's RSS while staying in the
// page cache, which is what prepare relies on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <algorithm>
#include <vector>

#include "runtime/platform/release_resident.h"

#if defined(__linux__)
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace {

std::vector<uint8_t> pattern(size_t bytes) {
  std::vector<uint8_t> v(bytes);
  for (size_t i = 0; i < bytes; ++i) v[i] = static_cast<uint8_t>(i * 131 + (i >> 12) * 7 + 1);
  return v;
}

TEST(ReleaseResidentTest, HeapContentsStay) {
  const std::vector<uint8_t> expected = pattern(1 << 20);
  std::vector<uint8_t> heap = expected;
  // Unaligned ends: the partial pages at both ends must stay too.
  tl_platform_release_resident(heap.data() + 3, heap.size() - 5);
  EXPECT_EQ(heap, expected);
}

TEST(ReleaseResidentTest, EmptyNullAndTinyRangesAreNoOps) {
  tl_platform_release_resident(nullptr, 0);
  tl_platform_release_resident(nullptr, 4096);
  uint8_t byte = 42;
  tl_platform_release_resident(&byte, 1);
  EXPECT_EQ(byte, 42);
}

#if defined(__linux__)
// Pages of [data, data + bytes) in memory per mincore (for a file mapping:
// in the page cache, whether or not this process maps them).
size_t cached_pages(const void* data, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(const_cast<void*>(data), bytes, in_core.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

// This process's resident file-backed memory (RssFile, kB), or -1.
long rss_file_kb() {
  FILE* status = std::fopen("/proc/self/status", "r");
  if (status == nullptr) return -1;
  char line[256];
  long kb = -1;
  while (std::fgets(line, sizeof(line), status) != nullptr) {
    if (std::sscanf(line, "RssFile: %ld", &kb) == 1) break;
  }
  std::fclose(status);
  return kb;
}

// A temporary file holding `contents`, removed with the object.
struct TempFile {
  char path[40] = "release_resident_test_XXXXXX";
  int fd;
  explicit TempFile(const std::vector<uint8_t>& contents) : fd(mkstemp(path)) {
    if (fd >= 0 && (write(fd, contents.data(), contents.size()) != static_cast<ssize_t>(contents.size()) ||
                    fsync(fd) != 0)) {
      close(fd);
      fd = -1;
    }
  }
  ~TempFile() {
    if (fd >= 0) close(fd);
    unlink(path);
  }
};

TEST(ReleaseResidentTest, WrittenPrivateFileMappingKeepsItsWrites) {
  const std::vector<uint8_t> original = pattern(1 << 20);
  TempFile file(original);
  ASSERT_GE(file.fd, 0);
  void* mapped = mmap(nullptr, original.size(), PROT_READ | PROT_WRITE, MAP_PRIVATE, file.fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* bytes = static_cast<uint8_t*>(mapped);
  std::vector<uint8_t> written(original);
  for (size_t i = 0; i < written.size(); i += 3) written[i] = static_cast<uint8_t>(~written[i]);
  std::copy(written.begin(), written.end(), bytes);  // Private copies of every page.
  tl_platform_release_resident(mapped, written.size());
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + written.size()), written);
  munmap(mapped, written.size());
}

TEST(ReleaseResidentTest, ReadOnlyFileMappingLeavesRssNotThePageCache) {
  const std::vector<uint8_t> expected = pattern(4 << 20);
  TempFile file(expected);
  ASSERT_GE(file.fd, 0);
  void* mapped = mmap(nullptr, expected.size(), PROT_READ, MAP_PRIVATE, file.fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const auto* bytes = static_cast<const uint8_t*>(mapped);
  volatile uint32_t touch = 0;
  for (size_t i = 0; i < expected.size(); i += 4096) touch += bytes[i];  // Fault every page in.
  const long rss_before = rss_file_kb();
  const size_t cached_before = cached_pages(mapped, expected.size());

  tl_platform_release_resident(mapped, expected.size());
  const long rss_after = rss_file_kb();
  const size_t cached_after = cached_pages(mapped, expected.size());
  // 4 MiB = 4096 kB left this process; the page cache kept them.
  EXPECT_LT(rss_after, rss_before - 2048) << "RssFile " << rss_before << " -> " << rss_after << " kB";
  EXPECT_GT(cached_after, cached_before / 2) << "of " << cached_before << " cached pages, " << cached_after
                                             << " stayed";
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + expected.size()), expected);
  munmap(mapped, expected.size());
}
#endif

}  // namespace
