// Tests for MemoryAllocator (memory_allocator.h).
#include "runtime/core/memory_allocator.h"

#include <cstdint>
#include <cstring>
#include <vector>

#include <gtest/gtest.h>

namespace torchlight {
namespace {

uintptr_t addr(const void* p) { return reinterpret_cast<uintptr_t>(p); }

TEST(MemoryAllocatorTest, AllocatesInOrderWithinTheBuffer) {
  alignas(16) uint8_t buffer[64];
  MemoryAllocator alloc(Span<uint8_t>(buffer, sizeof(buffer)));
  EXPECT_EQ(alloc.capacity(), 64u);
  EXPECT_EQ(alloc.used(), 0u);

  void* a = alloc.allocate(10, 1);
  void* b = alloc.allocate(6, 1);
  void* c = alloc.allocate(4, 4);
  EXPECT_EQ(a, buffer);
  EXPECT_EQ(b, buffer + 10);
  EXPECT_EQ(c, buffer + 16);
  EXPECT_EQ(alloc.used(), 20u);
  std::memset(a, 0xaa, 10);
  std::memset(b, 0xbb, 6);
  EXPECT_EQ(buffer[9], 0xaa);
  EXPECT_EQ(buffer[10], 0xbb);
}

TEST(MemoryAllocatorTest, DefaultAlignmentIsMaxAlign) {
  alignas(64) uint8_t buffer[256];
  MemoryAllocator alloc(buffer + 1, sizeof(buffer) - 1);
  void* p = alloc.allocate(3);
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(addr(p) % alignof(std::max_align_t), 0u);
  EXPECT_EQ(MemoryAllocator::kDefaultAlignment, alignof(std::max_align_t));
}

// Every power of two up to 4096, from a deliberately misaligned base, so the
// padding differs for each; used() counts padding plus size.
TEST(MemoryAllocatorTest, HonoursEveryPowerOfTwoAlignment) {
  std::vector<uint8_t> storage(64 * 1024);
  uint8_t* base = storage.data() + 1;
  MemoryAllocator alloc(base, storage.size() - 1);
  for (size_t alignment = 1; alignment <= 4096; alignment *= 2) {
    for (size_t size : {size_t{1}, size_t{3}, alignment}) {
      const size_t before = alloc.used();
      const uintptr_t start = addr(base) + before;
      void* p = alloc.allocate(size, alignment);
      ASSERT_NE(p, nullptr) << alignment;
      EXPECT_EQ(addr(p) % alignment, 0u) << alignment;
      EXPECT_GE(addr(p), start);
      EXPECT_LT(addr(p) - start, alignment) << "more padding than needed";
      EXPECT_EQ(alloc.used(), (addr(p) - start) + size + before);
      EXPECT_LE(addr(p) + size, addr(base) + alloc.capacity());
    }
  }
}

TEST(MemoryAllocatorTest, RejectsNonPowerOfTwoAlignment) {
  alignas(16) uint8_t buffer[256];
  MemoryAllocator alloc(buffer, sizeof(buffer));
  for (size_t alignment : {size_t{0}, size_t{3}, size_t{5}, size_t{6}, size_t{12}, size_t{24},
                           size_t{100}, size_t{4095}, SIZE_MAX}) {
    EXPECT_EQ(alloc.allocate(8, alignment), nullptr) << alignment;
    EXPECT_EQ(alloc.used(), 0u) << alignment;
  }
}

TEST(MemoryAllocatorTest, ExhaustionReturnsNull) {
  alignas(16) uint8_t buffer[32];
  MemoryAllocator alloc(buffer, sizeof(buffer));
  EXPECT_EQ(alloc.allocate(33, 1), nullptr);
  EXPECT_EQ(alloc.used(), 0u);
  EXPECT_NE(alloc.allocate(30, 1), nullptr);
  // 2 bytes left: 3 do not fit, nor 2 that need padding to 4.
  EXPECT_EQ(alloc.allocate(3, 1), nullptr);
  EXPECT_EQ(alloc.allocate(2, 4), nullptr);
  EXPECT_EQ(alloc.used(), 30u);
  void* last = alloc.allocate(2, 2);
  EXPECT_EQ(last, buffer + 30);
  EXPECT_EQ(alloc.used(), 32u);
  EXPECT_EQ(alloc.allocate(1, 1), nullptr);
  // Zero bytes still fit at the end.
  EXPECT_NE(alloc.allocate(0, 1), nullptr);
  EXPECT_EQ(alloc.used(), 32u);
}

TEST(MemoryAllocatorTest, HugeRequestsFailWithoutWrapping) {
  alignas(16) uint8_t buffer[64];
  MemoryAllocator alloc(buffer, sizeof(buffer));
  ASSERT_NE(alloc.allocate(5, 1), nullptr);
  EXPECT_EQ(alloc.allocate(SIZE_MAX, 1), nullptr);
  EXPECT_EQ(alloc.allocate(SIZE_MAX - 2, 8), nullptr);
  EXPECT_EQ(alloc.allocate(1, size_t{1} << 62), nullptr);
  EXPECT_EQ(alloc.allocate(1, size_t{1} << 63), nullptr);
  EXPECT_EQ(alloc.used(), 5u);
}

TEST(MemoryAllocatorTest, EmptyBuffer) {
  MemoryAllocator alloc(nullptr, 0);
  EXPECT_EQ(alloc.allocate(1, 1), nullptr);
  EXPECT_EQ(alloc.allocate_array<int>(1), nullptr);
}

TEST(MemoryAllocatorTest, ResetReusesFromTheStart) {
  alignas(16) uint8_t buffer[64];
  MemoryAllocator alloc(buffer, sizeof(buffer));
  void* first = alloc.allocate(40, 8);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(alloc.allocate(40, 8), nullptr);
  alloc.reset();
  EXPECT_EQ(alloc.used(), 0u);
  EXPECT_EQ(alloc.allocate(40, 8), first);
  EXPECT_EQ(alloc.capacity(), 64u);
}

struct Seven {
  int value = 7;
};

struct alignas(64) Wide {
  char bytes[3];
};

TEST(MemoryAllocatorTest, AllocateArrayConstructsAlignedElements) {
  std::vector<uint8_t> storage(1024);
  MemoryAllocator alloc(storage.data() + 1, storage.size() - 1);
  Seven* sevens = alloc.allocate_array<Seven>(5);
  ASSERT_NE(sevens, nullptr);
  EXPECT_EQ(addr(sevens) % alignof(Seven), 0u);
  for (int i = 0; i < 5; ++i) EXPECT_EQ(sevens[i].value, 7);

  Wide* wide = alloc.allocate_array<Wide>(2);
  ASSERT_NE(wide, nullptr);
  EXPECT_EQ(addr(wide) % 64, 0u);
  EXPECT_GE(addr(wide), addr(sevens + 5)) << "arrays overlap";

  int64_t* none = alloc.allocate_array<int64_t>(0);
  EXPECT_NE(none, nullptr) << "a zero-length array is not a failure";
}

TEST(MemoryAllocatorTest, AllocateArrayOverflowReturnsNull) {
  alignas(16) uint8_t buffer[64];
  MemoryAllocator alloc(buffer, sizeof(buffer));
  EXPECT_EQ(alloc.allocate_array<int64_t>(SIZE_MAX / 4), nullptr);  // count * 8 wraps
  EXPECT_EQ(alloc.allocate_array<int64_t>(SIZE_MAX / 8 + 1), nullptr);
  EXPECT_EQ(alloc.allocate_array<Wide>(SIZE_MAX / 32), nullptr);
  EXPECT_EQ(alloc.allocate_array<int64_t>(9), nullptr);  // 72 bytes: just too big.
  EXPECT_EQ(alloc.used(), 0u);
  EXPECT_NE(alloc.allocate_array<int64_t>(8), nullptr);
  EXPECT_EQ(alloc.used(), 64u);
}

// allocate() is the extension point: allocate_array goes through it.
class CountingAllocator : public MemoryAllocator {
 public:
  CountingAllocator(void* base, size_t size) : MemoryAllocator(base, size) {}
  void* allocate(size_t size, size_t alignment) override {
    ++calls;
    last_size = size;
    last_alignment = alignment;
    return MemoryAllocator::allocate(size, alignment);
  }
  int calls = 0;
  size_t last_size = 0;
  size_t last_alignment = 0;
};

TEST(MemoryAllocatorTest, AllocateArrayUsesVirtualAllocate) {
  alignas(16) uint8_t buffer[128];
  CountingAllocator alloc(buffer, sizeof(buffer));
  MemoryAllocator& base = alloc;
  ASSERT_NE(base.allocate_array<int32_t>(3), nullptr);
  EXPECT_EQ(alloc.calls, 1);
  EXPECT_EQ(alloc.last_size, 12u);
  EXPECT_EQ(alloc.last_alignment, alignof(int32_t));
}

}  // namespace
}  // namespace torchlight
