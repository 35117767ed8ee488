#include "extension/data_loader/file_data_loader.h"

#include <gtest/gtest.h>

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

const DataLoader::SegmentInfo kInfo{};

std::vector<uint8_t> bytes_of(const FreeableBuffer& buffer) {
  const auto* p = static_cast<const uint8_t*>(buffer.data());
  return std::vector<uint8_t>(p, p + buffer.size());
}

TEST(FileDataLoaderTest, WholeFileEqualsFileBytes) {
  const std::vector<uint8_t> contents = test_pattern(10000);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok()) << loader.status().message();
  EXPECT_STREQ(loader->name(), file.path().c_str());
  ASSERT_TRUE(loader->size().ok());
  EXPECT_EQ(*loader->size(), contents.size());

  Result<FreeableBuffer> buffer = loader->load(0, contents.size(), kInfo);
  ASSERT_TRUE(buffer.ok()) << buffer.status().message();
  EXPECT_EQ(bytes_of(*buffer), contents);
}

TEST(FileDataLoaderTest, SubRanges) {
  const std::vector<uint8_t> contents = test_pattern(5000);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  const size_t ranges[][2] = {{1, 1}, {7, 100}, {4095, 2}, {4096, 904}, {4999, 1}};
  for (const auto& r : ranges) {
    Result<FreeableBuffer> buffer = loader->load(r[0], r[1], kInfo);
    ASSERT_TRUE(buffer.ok()) << buffer.status().message();
    ASSERT_EQ(buffer->size(), r[1]);
    EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data() + r[0], r[1]))
        << "offset " << r[0] << " size " << r[1];
  }
}

TEST(FileDataLoaderTest, BuffersAreAligned) {
  const std::vector<uint8_t> contents = test_pattern(300);
  TempFile file(contents);
  for (size_t alignment : {size_t{1}, size_t{16}, size_t{64}, size_t{4096}}) {
    Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str(), alignment);
    ASSERT_TRUE(loader.ok()) << loader.status().message();
    const size_t want = alignment < DataLoader::kMinAlignment ? DataLoader::kMinAlignment
                                                               : alignment;
    EXPECT_EQ(loader->alignment(), want);
    // Odd offsets too: the buffer is a copy, so its alignment is independent.
    for (size_t offset : {size_t{0}, size_t{1}, size_t{3}, size_t{17}}) {
      Result<FreeableBuffer> buffer = loader->load(offset, 100, kInfo);
      ASSERT_TRUE(buffer.ok());
      EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % want, 0u)
          << "alignment " << alignment << " offset " << offset;
      EXPECT_EQ(0, std::memcmp(buffer->data(), contents.data() + offset, 100));
    }
  }
}

TEST(FileDataLoaderTest, RejectsNonPowerOfTwoAlignment) {
  TempFile file(test_pattern(10));
  for (size_t alignment : {size_t{0}, size_t{3}, size_t{48}}) {
    Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str(), alignment);
    ASSERT_FALSE(loader.ok());
    EXPECT_THAT(loader, ErrorIs(Error::kInvalidArgument, "is not a power of two"));
  }
}

TEST(FileDataLoaderTest, PastEndIsInvalidArgument) {
  TempFile file(test_pattern(100));
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  const size_t kMax = std::numeric_limits<size_t>::max();
  const size_t bad[][2] = {{0, 101}, {1, 100}, {100, 1}, {101, 0}, {50, kMax}, {kMax, 1},
                           {kMax, kMax}, {kMax - 10, 20}};
  for (const auto& r : bad) {
    Result<FreeableBuffer> buffer = loader->load(r[0], r[1], kInfo);
    ASSERT_FALSE(buffer.ok()) << "offset " << r[0] << " size " << r[1];
    EXPECT_THAT(buffer, ErrorIs(Error::kInvalidArgument));
  }
  Result<FreeableBuffer> buffer = loader->load(90, 20, kInfo);
  ASSERT_FALSE(buffer.ok());
  const std::string message = buffer.status().message();
  EXPECT_NE(message.find(file.path()), std::string::npos) << message;
  EXPECT_NE(message.find("20 bytes at offset 90"), std::string::npos) << message;
  EXPECT_NE(message.find("only 100 bytes"), std::string::npos) << message;
}

TEST(FileDataLoaderTest, EndBoundaryIsInBounds) {
  TempFile file(test_pattern(100));
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  Result<FreeableBuffer> last = loader->load(99, 1, kInfo);
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->size(), 1u);
  Result<FreeableBuffer> empty = loader->load(100, 0, kInfo);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
}

TEST(FileDataLoaderTest, MissingFileIsNotFound) {
  const char* path = "/tmp/torchlight_no_such_dir/missing.pte";
  Result<FileDataLoader> loader = FileDataLoader::from(path);
  ASSERT_FALSE(loader.ok());
  EXPECT_THAT(loader, ErrorIs(Error::kNotFound));
  EXPECT_STREQ(loader.status().message(),
               "cannot open '/tmp/torchlight_no_such_dir/missing.pte': No such file or directory");
}

TEST(FileDataLoaderTest, DirectoryIsAccessFailed) {
  Result<FileDataLoader> loader = FileDataLoader::from("/tmp");
  ASSERT_FALSE(loader.ok());
  EXPECT_THAT(loader, ErrorIs(Error::kAccessFailed, "'/tmp'"));
}

TEST(FileDataLoaderTest, EmptyFile) {
  TempFile file({});
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  EXPECT_EQ(*loader->size(), 0u);
  Result<FreeableBuffer> empty = loader->load(0, 0, kInfo);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  Result<FreeableBuffer> past = loader->load(0, 1, kInfo);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past, ErrorIs(Error::kInvalidArgument, "the data is only 0 bytes"));
}

TEST(FileDataLoaderTest, FreeTwiceIsSafeAndBufferOutlivesLoader) {
  const std::vector<uint8_t> contents = test_pattern(64);
  TempFile file(contents);
  FreeableBuffer buffer;
  {
    Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
    ASSERT_TRUE(loader.ok());
    Result<FreeableBuffer> loaded = loader->load(0, 64, kInfo);
    ASSERT_TRUE(loaded.ok());
    buffer = std::move(*loaded);
  }
  EXPECT_EQ(bytes_of(buffer), contents);  // The loader is gone; the copy is not.
  buffer.free();
  EXPECT_EQ(buffer.data(), nullptr);
  EXPECT_EQ(buffer.size(), 0u);
  buffer.free();  // ASan reports a double free if this frees again.
}

TEST(FileDataLoaderTest, ShortReadWhenFileShrinks) {
  const std::vector<uint8_t> contents = test_pattern(1000);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  ASSERT_EQ(::truncate(file.path().c_str(), 500), 0);
  Result<FreeableBuffer> buffer = loader->load(400, 200, kInfo);
  ASSERT_FALSE(buffer.ok());
  EXPECT_THAT(buffer, ErrorIs(Error::kAccessFailed, "short read"));
}

TEST(FileDataLoaderTest, Movable) {
  const std::vector<uint8_t> contents = test_pattern(32);
  TempFile file(contents);
  Result<FileDataLoader> loader = FileDataLoader::from(file.path().c_str());
  ASSERT_TRUE(loader.ok());
  FileDataLoader moved(std::move(*loader));
  EXPECT_STREQ(moved.name(), file.path().c_str());
  Result<FreeableBuffer> buffer = moved.load(0, 32, kInfo);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(bytes_of(*buffer), contents);
  // The moved-from loader no longer owns the descriptor.
  Result<FreeableBuffer> stale = loader->load(0, 0, kInfo);
  ASSERT_FALSE(stale.ok());
  EXPECT_THAT(stale, ErrorIs(Error::kInvalidState, "FileDataLoader was moved from"));

  TempFile other(test_pattern(8));
  Result<FileDataLoader> second = FileDataLoader::from(other.path().c_str());
  ASSERT_TRUE(second.ok());
  moved = std::move(*second);
  EXPECT_STREQ(moved.name(), other.path().c_str());
  EXPECT_EQ(*moved.size(), 8u);
}

}  // namespace
}  // namespace torchlight
