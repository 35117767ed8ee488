#include "extension/llm/runner/peak_rss.h"

#include <gtest/gtest.h>

#include <cstring>
#include <memory>

namespace torchlight {
namespace {

TEST(PeakRssTest, GrowsWhenMemoryIsTouched) {
  const uint64_t before = peak_rss_bytes();
  EXPECT_GT(before, 0u);
  constexpr size_t kBytes = size_t{96} << 20;
  std::unique_ptr<char[]> block(new char[kBytes]);
  std::memset(block.get(), 1, kBytes);  // Touch every page so it is resident.
  asm volatile("" : : "r"(block.get()) : "memory");  // Keep the block from being elided.
  const uint64_t after = peak_rss_bytes();
  EXPECT_GE(after, before);
  EXPECT_GE(after, kBytes);
  EXPECT_EQ(block[kBytes - 1], 1);
}

}  // namespace
}  // namespace torchlight
