#include "extension/data_loader/buffer_data_loader.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "extension/data_loader/temp_file_for_test.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

const DataLoader::SegmentInfo kInfo{};

TEST(BufferDataLoaderTest, LoadsAreViewsIntoTheBuffer) {
  const std::vector<uint8_t> contents = test_pattern(1000);
  BufferDataLoader loader(contents.data(), contents.size());
  EXPECT_STREQ(loader.name(), "<memory>");
  EXPECT_EQ(*loader.size(), 1000u);
  Result<FreeableBuffer> whole = loader.load(0, 1000, kInfo);
  ASSERT_TRUE(whole.ok());
  EXPECT_EQ(whole->data(), contents.data());  // No copy.
  EXPECT_EQ(whole->size(), 1000u);
  Result<FreeableBuffer> part = loader.load(123, 45, kInfo);
  ASSERT_TRUE(part.ok());
  EXPECT_EQ(part->data(), contents.data() + 123);
  EXPECT_EQ(part->size(), 45u);
}

TEST(BufferDataLoaderTest, FreeIsANoOpAndSafeTwice) {
  std::vector<uint8_t> contents = test_pattern(16);
  const std::vector<uint8_t> copy = contents;
  BufferDataLoader loader(contents.data(), contents.size(), "weights");
  Result<FreeableBuffer> buffer = loader.load(0, 16, kInfo);
  ASSERT_TRUE(buffer.ok());
  buffer->free();
  buffer->free();
  EXPECT_EQ(buffer->data(), nullptr);
  EXPECT_EQ(contents, copy);  // The caller's memory is untouched (and still valid under ASan).
}

TEST(BufferDataLoaderTest, BoundsChecks) {
  const std::vector<uint8_t> contents = test_pattern(100);
  BufferDataLoader loader(contents.data(), contents.size(), "embedded.pte");
  EXPECT_STREQ(loader.name(), "embedded.pte");
  const size_t kMax = std::numeric_limits<size_t>::max();
  const size_t bad[][2] = {{0, 101}, {100, 1}, {101, 0}, {1, kMax}, {kMax, 1}, {kMax, kMax}};
  for (const auto& r : bad) {
    Result<FreeableBuffer> buffer = loader.load(r[0], r[1], kInfo);
    ASSERT_FALSE(buffer.ok()) << "offset " << r[0] << " size " << r[1];
    EXPECT_THAT(buffer, ErrorIs(Error::kInvalidArgument, "'embedded.pte'"));
  }
  Result<FreeableBuffer> end = loader.load(100, 0, kInfo);
  ASSERT_TRUE(end.ok());
  EXPECT_EQ(end->size(), 0u);
}

TEST(BufferDataLoaderTest, EmptyBuffer) {
  BufferDataLoader loader(nullptr, 0, nullptr);
  EXPECT_STREQ(loader.name(), "<memory>");
  Result<FreeableBuffer> empty = loader.load(0, 0, kInfo);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  Result<FreeableBuffer> past = loader.load(0, 1, kInfo);
  ASSERT_FALSE(past.ok());
  EXPECT_THAT(past, ErrorIs(Error::kInvalidArgument, "the data is only 0 bytes"));
}

TEST(BufferDataLoaderTest, UsableThroughTheInterface) {
  const std::vector<uint8_t> contents = test_pattern(64);
  BufferDataLoader concrete(contents.data(), contents.size(), "x");
  DataLoader& loader = concrete;
  EXPECT_STREQ(loader.name(), "x");
  Result<FreeableBuffer> buffer = loader.load(32, 32, kInfo);
  ASSERT_TRUE(buffer.ok());
  EXPECT_EQ(buffer->bytes()[0], contents[32]);
}

}  // namespace
}  // namespace torchlight
