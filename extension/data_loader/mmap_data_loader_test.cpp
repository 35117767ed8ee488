#include "extension/data_loader/mmap_data_loader.h"

#include <gtest/gtest.h>
#include <linux/capability.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "extension/data_loader/temp_file_for_test.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using MlockConfig = MmapDataLoader::MlockConfig;
const DataLoader::SegmentInfo kInfo{};

TEST(MmapDataLoaderTest, WholeFileEqualsFileBytes) {
  const std::vector<uint8_t> contents = test_pattern(3 * 4096 + 123);
  TempFile file(contents);
  Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok()) << loader.status().message();
  EXPECT_STREQ(loader->name(), file.path().c_str());
  EXPECT_EQ(*loader->size(), contents.size());
  EXPECT_EQ(loader->mlock_config(), MlockConfig::kNoMlock);

  Result<FreeableBuffer> buffer = loader->load(0, contents.size(), kInfo);
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  ASSERT_EQ(buffer->size(), contents.size());
  EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data(), contents.size()));
  // Offset 0 maps from a page boundary.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % ::sysconf(_SC_PAGESIZE), 0u);
}

TEST(MmapDataLoaderTest, SubRangesPointAtTheRequestedByte) {
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  const std::vector<uint8_t> contents = test_pattern(3 * page);
  TempFile file(contents);
  Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  const size_t ranges[][2] = {{1, 1},           {16, 100},   {page - 1, 2},
                              {page, page},     {page + 5, page * 2 - 5},
                              {3 * page - 1, 1}};
  for (const auto& r : ranges) {
    Result<FreeableBuffer> buffer = loader->load(r[0], r[1], kInfo);
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    ASSERT_EQ(buffer->size(), r[1]);
    EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data() + r[0], r[1]))
        << "offset " << r[0] << " size " << r[1];
    // Aligned in memory exactly as in the file (within a page).
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % page, r[0] % page);
  }
}

TEST(MmapDataLoaderTest, PastEndIsInvalidArgument) {
  TempFile file(test_pattern(100));
  Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  const size_t kMax = std::numeric_limits<size_t>::max();
  const size_t bad[][2] = {{0, 101}, {100, 1}, {101, 0}, {50, kMax}, {kMax, 1}, {kMax - 10, 20}};
  for (const auto& r : bad) {
    Result<FreeableBuffer> buffer = loader->load(r[0], r[1], kInfo);
    ASSERT_FALSE(buffer.ok()) << "offset " << r[0] << " size " << r[1];
    EXPECT_THAT(buffer, ErrorIs(Error::kInvalidArgument));
    EXPECT_NE(std::string(buffer.status().message()).find(file.path()), std::string::npos);
  }
}

TEST(MmapDataLoaderTest, MissingFileIsNotFound) {
  Result<MmapDataLoader> loader = MmapDataLoader::from("/tmp/torchlight_no_such_file.pte");
  ASSERT_FALSE(loader.ok());
  EXPECT_THAT(loader, ErrorIs(Error::kNotFound));
  EXPECT_STREQ(loader.status().message(),
               "cannot open '/tmp/torchlight_no_such_file.pte': No such file or directory");
}

TEST(MmapDataLoaderTest, EmptyFileAndEmptyLoads) {
  TempFile file({});
  Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  EXPECT_EQ(*loader->size(), 0u);
  Result<FreeableBuffer> empty = loader->load(0, 0, kInfo);
  ASSERT_TRUE(empty.ok()) << empty.status().message();
  EXPECT_EQ(empty->size(), 0u);
  EXPECT_EQ(empty->data(), nullptr);
  Result<FreeableBuffer> past = loader->load(0, 1, kInfo);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past, ErrorIs(Error::kInvalidArgument, "the data is only 0 bytes"));

  TempFile nonempty(test_pattern(10));
  Result<MmapDataLoader> other = MmapDataLoader::from(nonempty.path().c_str());
  ASSERT_TRUE(other.ok());
  for (size_t offset : {size_t{0}, size_t{5}, size_t{10}}) {
    Result<FreeableBuffer> none = other->load(offset, 0, kInfo);
    ASSERT_TRUE(none.ok());
    EXPECT_EQ(none->size(), 0u);
  }
}

TEST(MmapDataLoaderTest, MlockConfigs) {
  const std::vector<uint8_t> contents = test_pattern(2 * 4096);
  TempFile file(contents);
  for (MlockConfig config : {MlockConfig::kNoMlock, MlockConfig::kUseMlock,
                             MlockConfig::kUseMlockIgnoreErrors}) {
    Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str(), config);
    ASSERT_TRUE(loader.ok());
    EXPECT_EQ(loader->mlock_config(), config);
    Result<FreeableBuffer> buffer = loader->load(100, 5000, kInfo);
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data() + 100, 5000));
  }
}

// Sets whether CAP_IPC_LOCK is effective (it lets root mlock past
// RLIMIT_MEMLOCK). Only the effective set changes, so it can be restored.
// Returns false when the capability state cannot be read or written.
bool set_ipc_lock_effective(bool on) {
  __user_cap_header_struct header{_LINUX_CAPABILITY_VERSION_3, 0};
  __user_cap_data_struct data[2] = {};
  if (::syscall(SYS_capget, &header, data) != 0) return false;
  const uint32_t bit = 1u << CAP_IPC_LOCK;  // CAP_IPC_LOCK (14) is in word 0.
  if ((data[0].permitted & bit) == 0) return true;  // Never had it: nothing to do.
  data[0].effective = on ? (data[0].effective | bit) : (data[0].effective & ~bit);
  return ::syscall(SYS_capset, &header, data) == 0;
}

TEST(MmapDataLoaderTest, MlockFailureIsAnErrorOnlyWithUseMlock) {
  const std::vector<uint8_t> contents = test_pattern(3 * 4096);
  TempFile file(contents);
  struct rlimit saved;
  ASSERT_EQ(::getrlimit(RLIMIT_MEMLOCK, &saved), 0);
  struct rlimit none = saved;
  none.rlim_cur = 0;
  ASSERT_EQ(::setrlimit(RLIMIT_MEMLOCK, &none), 0);
  const bool dropped = set_ipc_lock_effective(false);

  Result<MmapDataLoader> strict = MmapDataLoader::from(file.path().c_str(), MlockConfig::kUseMlock);
  Result<MmapDataLoader> lax =
      MmapDataLoader::from(file.path().c_str(), MlockConfig::kUseMlockIgnoreErrors);
  ASSERT_TRUE(strict.ok());
  ASSERT_TRUE(lax.ok());
  Result<FreeableBuffer> strict_buffer = strict->load(0, contents.size(), kInfo);
  Result<FreeableBuffer> lax_buffer = lax->load(0, contents.size(), kInfo);
  if (dropped) set_ipc_lock_effective(true);
  ASSERT_EQ(::setrlimit(RLIMIT_MEMLOCK, &saved), 0);

  ASSERT_TRUE(lax_buffer.ok()) << lax_buffer.status().message();
  EXPECT_EQ(0, std::memcmp(lax_buffer->data(), contents.data(), contents.size()));
  if (strict_buffer.ok()) {
    GTEST_SKIP() << "mlock ignores RLIMIT_MEMLOCK here (CAP_IPC_LOCK); failure path not testable";
  }
  EXPECT_THAT(strict_buffer, ErrorIs(Error::kAccessFailed, "mlock"));
}

TEST(MmapDataLoaderTest, FreeTwiceIsSafeAndBufferOutlivesLoader) {
  const std::vector<uint8_t> contents = test_pattern(5000);
  TempFile file(contents);
  FreeableBuffer buffer;
  {
    Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
    ASSERT_TRUE(loader.ok());
    Result<FreeableBuffer> loaded = loader->load(4000, 1000, kInfo);
    ASSERT_TRUE(loaded.ok());
    buffer = std::move(*loaded);
  }
  // The mapping holds its own reference to the file once the fd is closed.
  EXPECT_EQ(0, std::memcmp(buffer.data(), contents.data() + 4000, 1000));
  buffer.free();
  EXPECT_EQ(buffer.data(), nullptr);
  buffer.free();
}

TEST(MmapDataLoaderTest, ManyLoadsAreUnmapped) {
  // Each free must munmap; leaking mappings would eventually exhaust
  // vm.max_map_count (65530), which this loop would exceed.
  const std::vector<uint8_t> contents = test_pattern(3 * 4096);
  TempFile file(contents);
  Result<MmapDataLoader> loader = MmapDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  for (int i = 0; i < 70000; ++i) {
    Result<FreeableBuffer> buffer = loader->load(4097, 5000, kInfo);
    ASSERT_TRUE(buffer.ok()) << "load " << i << ": " << buffer.status().message();
  }
}

TEST(MmapDataLoaderTest, Movable) {
  const std::vector<uint8_t> contents = test_pattern(32);
  TempFile file(contents);
  Result<MmapDataLoader> loader =
      MmapDataLoader::from(file.path().c_str(), MlockConfig::kUseMlockIgnoreErrors);
  ASSERT_TRUE(loader.ok());
  MmapDataLoader moved(std::move(*loader));
  EXPECT_EQ(moved.mlock_config(), MlockConfig::kUseMlockIgnoreErrors);
  Result<FreeableBuffer> buffer = moved.load(0, 32, kInfo);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data(), 32));
  Result<FreeableBuffer> stale = loader->load(0, 0, kInfo);
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale, ErrorIs(Error::kInvalidState, "MmapDataLoader was moved from"));
}

}  // namespace
}  // namespace torchlight
