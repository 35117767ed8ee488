#include "extension/memory/malloc_allocator.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <set>
#include <vector>

namespace torchlight {
namespace {

bool aligned(const void* p, size_t alignment) {
  return reinterpret_cast<uintptr_t>(p) % alignment == 0;
}

TEST(MallocAllocatorTest, GrowsPastOneChunk) {
  MallocAllocator allocator(1024);
  std::vector<uint8_t*> blocks;
  // 100 x 100 bytes is ten times the chunk size: a fixed arena would run out.
  for (int i = 0; i < 100; ++i) {
    auto* p = static_cast<uint8_t*>(allocator.allocate(100, 1));
    ASSERT_NE(p, nullptr) << "allocation " << i;
    std::memset(p, i, 100);
    blocks.push_back(p);
  }
  EXPECT_GE(allocator.chunk_count(), 10u);
  EXPECT_EQ(allocator.allocated_bytes(), 100u * 100u);
  EXPECT_GE(allocator.reserved_bytes(), allocator.allocated_bytes());
  // No two allocations overlap: each still holds its own fill value.
  for (int i = 0; i < 100; ++i) {
    for (int j = 0; j < 100; ++j) ASSERT_EQ(blocks[i][j], static_cast<uint8_t>(i));
  }
}

TEST(MallocAllocatorTest, HonoursAlignment) {
  MallocAllocator allocator(4096);
  for (size_t alignment : {1, 2, 4, 8, 16, 32, 64, 128, 256, 1024, 4096, 65536}) {
    for (size_t size : {1, 3, 17, 100}) {
      void* p = allocator.allocate(size, alignment);
      ASSERT_NE(p, nullptr);
      EXPECT_TRUE(aligned(p, alignment)) << "size " << size << " alignment " << alignment;
      std::memset(p, 0xab, size);  // ASan checks the block is really that big.
    }
  }
  void* p = allocator.allocate(8);
  ASSERT_NE(p, nullptr);
  EXPECT_TRUE(aligned(p, MemoryAllocator::kDefaultAlignment));
}

TEST(MallocAllocatorTest, LargeRequestsGetTheirOwnChunk) {
  MallocAllocator allocator(1024);
  void* small1 = allocator.allocate(16, 16);
  ASSERT_NE(small1, nullptr);
  EXPECT_EQ(allocator.chunk_count(), 1u);
  const size_t kBig = 1 << 20;
  auto* big = static_cast<uint8_t*>(allocator.allocate(kBig, 64));
  ASSERT_NE(big, nullptr);
  EXPECT_TRUE(aligned(big, 64));
  std::memset(big, 1, kBig);
  EXPECT_EQ(allocator.chunk_count(), 2u);
  // The small-object chunk is still current: the next small block follows
  // the first one instead of opening a third chunk.
  void* small2 = allocator.allocate(16, 16);
  ASSERT_NE(small2, nullptr);
  EXPECT_EQ(allocator.chunk_count(), 2u);
  EXPECT_EQ(static_cast<uint8_t*>(small2), static_cast<uint8_t*>(small1) + 16);
}

TEST(MallocAllocatorTest, ZeroSizeGivesDistinctPointers) {
  MallocAllocator allocator;
  std::set<void*> seen;
  for (int i = 0; i < 10; ++i) {
    void* p = allocator.allocate(0);
    ASSERT_NE(p, nullptr);
    EXPECT_TRUE(seen.insert(p).second);
  }
}

TEST(MallocAllocatorTest, RejectsBadAlignmentAndOverflow) {
  MallocAllocator allocator;
  EXPECT_EQ(allocator.allocate(8, 0), nullptr);
  EXPECT_EQ(allocator.allocate(8, 3), nullptr);
  EXPECT_EQ(allocator.allocate(8, 24), nullptr);
  const size_t kMax = std::numeric_limits<size_t>::max();
  EXPECT_EQ(allocator.allocate(kMax, 16), nullptr);  // size + padding wraps.
  EXPECT_EQ(allocator.allocate_array<uint64_t>(kMax / 4), nullptr);
}

TEST(MallocAllocatorTest, ResetFreesEverything) {
  MallocAllocator allocator(256);
  for (int i = 0; i < 20; ++i) ASSERT_NE(allocator.allocate(200), nullptr);
  EXPECT_GT(allocator.chunk_count(), 0u);
  allocator.reset();
  EXPECT_EQ(allocator.chunk_count(), 0u);
  EXPECT_EQ(allocator.reserved_bytes(), 0u);
  EXPECT_EQ(allocator.allocated_bytes(), 0u);
  // Usable again after reset; LeakSanitizer checks the destructor frees it.
  auto* p = static_cast<uint32_t*>(allocator.allocate(sizeof(uint32_t) * 4, alignof(uint32_t)));
  ASSERT_NE(p, nullptr);
  p[3] = 7;
  EXPECT_EQ(allocator.chunk_count(), 1u);
}

TEST(MallocAllocatorTest, WorksThroughTheBaseInterface) {
  MallocAllocator concrete(128);
  MemoryAllocator& allocator = concrete;
  int64_t* values = allocator.allocate_array<int64_t>(1000);  // Far bigger than a chunk.
  ASSERT_NE(values, nullptr);
  EXPECT_TRUE(aligned(values, alignof(int64_t)));
  for (int i = 0; i < 1000; ++i) values[i] = i;
  EXPECT_EQ(values[999], 999);
  allocator.reset();  // Virtual: reaches MallocAllocator::reset.
  EXPECT_EQ(concrete.chunk_count(), 0u);
}

}  // namespace
}  // namespace torchlight
