// Tests for FreeableBuffer (freeable_buffer.h): the free function runs
// exactly once, whatever path the buffer takes.
#include "runtime/core/freeable_buffer.h"

#include <cstdint>
#include <type_traits>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

namespace torchlight {
namespace {

static_assert(!std::is_copy_constructible<FreeableBuffer>::value, "move-only");
static_assert(!std::is_copy_assignable<FreeableBuffer>::value, "move-only");
static_assert(std::is_nothrow_move_constructible<FreeableBuffer>::value, "");

// Records every call of the free function.
struct FreeLog {
  struct Call {
    void* data;
    size_t size;
  };
  std::vector<Call> calls;

  static void free_fn(void* context, void* data, size_t size) {
    static_cast<FreeLog*>(context)->calls.push_back({data, size});
  }
};

TEST(FreeableBufferTest, DefaultIsEmpty) {
  FreeableBuffer b;
  EXPECT_EQ(b.data(), nullptr);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_TRUE(b.bytes().empty());
  b.free();  // No function: nothing to call, nothing to crash.
}

TEST(FreeableBufferTest, FreedOnceOnDestruction) {
  FreeLog log;
  uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  {
    FreeableBuffer b(bytes, sizeof(bytes), &FreeLog::free_fn, &log);
    EXPECT_EQ(b.data(), bytes);
    EXPECT_EQ(b.size(), 8u);
    EXPECT_EQ(b.bytes().data(), bytes);
    EXPECT_EQ(b.bytes().size(), 8u);
    EXPECT_EQ(b.bytes()[7], 8);
    EXPECT_TRUE(log.calls.empty());
  }
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.calls[0].data, bytes);
  EXPECT_EQ(log.calls[0].size, 8u);
}

TEST(FreeableBufferTest, ExplicitFreeThenDestructionFreesOnce) {
  FreeLog log;
  uint8_t bytes[4];
  {
    FreeableBuffer b(bytes, sizeof(bytes), &FreeLog::free_fn, &log);
    b.free();
    ASSERT_EQ(log.calls.size(), 1u);
    EXPECT_EQ(log.calls[0].data, bytes);
    EXPECT_EQ(log.calls[0].size, 4u);
    EXPECT_EQ(b.data(), nullptr);
    EXPECT_EQ(b.size(), 0u);
    b.free();
    EXPECT_EQ(log.calls.size(), 1u);
  }
  EXPECT_EQ(log.calls.size(), 1u);
}

TEST(FreeableBufferTest, MoveConstructionTransfersOwnership) {
  FreeLog log;
  uint8_t bytes[16];
  {
    FreeableBuffer a(bytes, sizeof(bytes), &FreeLog::free_fn, &log);
    FreeableBuffer b(std::move(a));
    EXPECT_TRUE(log.calls.empty());
    EXPECT_EQ(b.data(), bytes);
    EXPECT_EQ(b.size(), 16u);
    EXPECT_EQ(a.data(), nullptr);  // NOLINT(bugprone-use-after-move): checking the moved-from state
    EXPECT_EQ(a.size(), 0u);
    a.free();
    EXPECT_TRUE(log.calls.empty()) << "a moved-from buffer must not free";
  }
  ASSERT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(log.calls[0].data, bytes);
}

TEST(FreeableBufferTest, MoveAssignOverLiveBufferFreesItFirst) {
  FreeLog log_old;
  FreeLog log_new;
  uint8_t old_bytes[2];
  uint8_t new_bytes[3];
  {
    FreeableBuffer target(old_bytes, sizeof(old_bytes), &FreeLog::free_fn, &log_old);
    FreeableBuffer source(new_bytes, sizeof(new_bytes), &FreeLog::free_fn, &log_new);
    target = std::move(source);
    ASSERT_EQ(log_old.calls.size(), 1u);
    EXPECT_EQ(log_old.calls[0].data, old_bytes);
    EXPECT_EQ(log_old.calls[0].size, 2u);
    EXPECT_TRUE(log_new.calls.empty());
    EXPECT_EQ(target.data(), new_bytes);
    EXPECT_EQ(target.size(), 3u);
    EXPECT_EQ(source.data(), nullptr);  // NOLINT(bugprone-use-after-move)
  }
  EXPECT_EQ(log_old.calls.size(), 1u);
  ASSERT_EQ(log_new.calls.size(), 1u);
  EXPECT_EQ(log_new.calls[0].data, new_bytes);
  EXPECT_EQ(log_new.calls[0].size, 3u);
}

TEST(FreeableBufferTest, MoveAssignEmptyOverLiveBufferFreesIt) {
  FreeLog log;
  uint8_t bytes[1];
  FreeableBuffer b(bytes, 1, &FreeLog::free_fn, &log);
  b = FreeableBuffer();
  EXPECT_EQ(log.calls.size(), 1u);
  EXPECT_EQ(b.data(), nullptr);
}

TEST(FreeableBufferTest, SelfMoveAssignKeepsBuffer) {
  FreeLog log;
  uint8_t bytes[5];
  {
    FreeableBuffer b(bytes, sizeof(bytes), &FreeLog::free_fn, &log);
    FreeableBuffer& alias = b;
    b = std::move(alias);
    EXPECT_TRUE(log.calls.empty());
    EXPECT_EQ(b.data(), bytes);
    EXPECT_EQ(b.size(), 5u);
  }
  EXPECT_EQ(log.calls.size(), 1u);
}

TEST(FreeableBufferTest, NoFreeFunctionIsBorrowed) {
  uint8_t bytes[4] = {9, 9, 9, 9};
  {
    FreeableBuffer b(bytes, sizeof(bytes), nullptr);
    EXPECT_EQ(b.data(), bytes);
    b.free();
    EXPECT_EQ(b.data(), nullptr);
    EXPECT_EQ(b.size(), 0u);
  }
  EXPECT_EQ(bytes[0], 9);
}

TEST(FreeableBufferTest, ChainOfMovesFreesOnce) {
  FreeLog log;
  uint8_t bytes[6];
  {
    FreeableBuffer a(bytes, sizeof(bytes), &FreeLog::free_fn, &log);
    FreeableBuffer b(std::move(a));
    FreeableBuffer c;
    c = std::move(b);
    FreeableBuffer d(std::move(c));
    EXPECT_TRUE(log.calls.empty());
    EXPECT_EQ(d.data(), bytes);
  }
  EXPECT_EQ(log.calls.size(), 1u);
}

}  // namespace
}  // namespace torchlight
