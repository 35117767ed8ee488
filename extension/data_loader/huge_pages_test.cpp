// FileDataLoader's huge pages (huge_pages.h): large ranges start on a 2 MiB
// boundary and are marked MADV_HUGEPAGE, small ones and TORCHLIGHT_HUGE_PAGES=0
// are not, and every range holds the file's bytes.
#include "extension/data_loader/huge_pages.h"

#include <gtest/gtest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "extension/data_loader/file_data_loader.h"
#include "extension/data_loader/temp_file_for_test.h"

namespace torchlight {
namespace {

const DataLoader::SegmentInfo kInfo{};
constexpr size_t kHuge = kHugePageBytes;

// Sets TORCHLIGHT_HUGE_PAGES for one scope (unset: the default).
class HugePagesSetting {
 public:
  explicit HugePagesSetting(const char* value) {
    if (value == nullptr) {
      ::unsetenv("TORCHLIGHT_HUGE_PAGES");
    } else {
      ::setenv("TORCHLIGHT_HUGE_PAGES", value, 1);
    }
  }
  ~HugePagesSetting() { ::unsetenv("TORCHLIGHT_HUGE_PAGES"); }
};

// Whether this kernel takes MADV_HUGEPAGE (EINVAL without transparent huge
// pages); probed, since /sys may not be mounted where tests run.
bool kernel_has_thp() {
  void* probe = ::mmap(nullptr, kHuge, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (probe == MAP_FAILED) return false;
  const bool ok = ::madvise(probe, kHuge, MADV_HUGEPAGE) == 0;
  ::munmap(probe, kHuge);
  return ok;
}

// The VmFlags line of the mapping that holds `address` (/proc/self/smaps), or "".
std::string vm_flags_of(const void* address) {
  const uintptr_t a = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    unsigned long lo = 0, hi = 0;
    // A mapping's first line: "lo-hi perms offset dev inode path".
    if (std::sscanf(line.c_str(), "%lx-%lx", &lo, &hi) == 2) {
      inside = lo <= a && a < hi;
      continue;
    }
    if (inside && line.rfind("VmFlags:", 0) == 0) return line;
  }
  return "";
}

bool marked_huge(const void* address) { return vm_flags_of(address).find(" hg") != std::string::npos; }

TEST(HugePagesTest, WantedFromTwoMebibytesUnlessTurnedOff) {
  {
    HugePagesSetting unset(nullptr);
    EXPECT_FALSE(want_huge_pages(kHuge - 1));
    EXPECT_TRUE(want_huge_pages(kHuge));
    EXPECT_TRUE(want_huge_pages(100 * kHuge));
  }
  {
    HugePagesSetting on("1");
    EXPECT_TRUE(want_huge_pages(kHuge));
  }
  {
    HugePagesSetting off("0");
    EXPECT_FALSE(want_huge_pages(kHuge));
    EXPECT_FALSE(want_huge_pages(100 * kHuge));
  }
}

TEST(HugePagesTest, FileLoaderAlignsLargeRangesAndMarksThem) {
  const std::vector<uint8_t> contents = test_pattern(3 * kHuge);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  const size_t offset = 4096 + 64;
  const size_t size = 2 * kHuge + 64;
  Result<FreeableBuffer> buffer = loader->load(offset, size, kInfo);
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % kHuge, 0u);
  EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data() + offset, size));
  if (kernel_has_thp()) {
    EXPECT_TRUE(marked_huge(buffer->data())) << vm_flags_of(buffer->data());
  }
}

TEST(HugePagesTest, FileLoaderLeavesSmallRangesAndTurnedOffAlone) {
  const std::vector<uint8_t> contents = test_pattern(3 * kHuge);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  Result<FreeableBuffer> small = loader->load(100, kHuge - 1, kInfo);
  ASSERT_TRUE(small.ok());
  EXPECT_EQ(0, std::memcmp(small->data(), contents.data() + 100, kHuge - 1));
  EXPECT_FALSE(marked_huge(small->data())) << vm_flags_of(small->data());

  HugePagesSetting off("0");
  Result<FreeableBuffer> large = loader->load(8192, kHuge + 4096, kInfo);
  ASSERT_TRUE(large.ok());
  EXPECT_EQ(0, std::memcmp(large->data(), contents.data() + 8192, kHuge + 4096));
  EXPECT_FALSE(marked_huge(large->data())) << vm_flags_of(large->data());
}

}  // namespace
}  // namespace torchlight
