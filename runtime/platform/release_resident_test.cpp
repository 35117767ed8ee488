// tl_platform_release_resident only advises: whatever the OS does with the
// pages, the memory reads back unchanged, for heap and for a mapped file
// (the two places a program's weights live). On Linux the file's clean
// pages also leave residency (mincore), which is what prepare relies on.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
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
// Pages of [data, data + bytes) resident per mincore.
size_t resident_pages(const void* data, size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((bytes + page - 1) / page);
  if (mincore(const_cast<void*>(data), bytes, in_core.data()) != 0) return SIZE_MAX;
  size_t n = 0;
  for (unsigned char c : in_core) n += c & 1;
  return n;
}

TEST(ReleaseResidentTest, MappedFileContentsStayAndPagesLeave) {
  const std::vector<uint8_t> expected = pattern(4 << 20);
  char path[] = "release_resident_test_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  ASSERT_EQ(write(fd, expected.data(), expected.size()), static_cast<ssize_t>(expected.size()));
  ASSERT_EQ(fsync(fd), 0);  // Clean pages: reclaim drops them without writeback.
  void* mapped = mmap(nullptr, expected.size(), PROT_READ, MAP_PRIVATE, fd, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  const auto* bytes = static_cast<const uint8_t*>(mapped);
  volatile uint32_t touch = 0;
  for (size_t i = 0; i < expected.size(); i += 4096) touch += bytes[i];  // Fault every page in.
  const size_t before = resident_pages(mapped, expected.size());

  tl_platform_release_resident(mapped, expected.size());
  const size_t after = resident_pages(mapped, expected.size());
#if defined(MADV_PAGEOUT)
  EXPECT_LT(after, before / 2) << "of " << before << " resident pages, " << after << " stayed";
#endif
  EXPECT_EQ(std::vector<uint8_t>(bytes, bytes + expected.size()), expected);
  munmap(mapped, expected.size());
  close(fd);
  unlink(path);
}
#endif

}  // namespace
