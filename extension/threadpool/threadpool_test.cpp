#include "extension/threadpool/threadpool.h"

#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <atomic>
#include <vector>

namespace torchlight {
namespace {

TEST(ThreadpoolTest, EveryItemRunsExactlyOnce) {
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{1000}, size_t{4097}}) {
    std::vector<std::atomic<int>> hits(n);
    threadpool::parallel_for(n, 3, [&](size_t begin, size_t end) {
      ASSERT_LE(begin, end);
      ASSERT_LE(end, n);
      for (size_t i = begin; i < end; ++i) hits[i]++;
    });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
  }
}

TEST(ThreadpoolTest, ChunksRespectMinimumSizeExceptTheLast) {
  std::atomic<size_t> short_chunks{0};
  threadpool::parallel_for(1000, 64, [&](size_t begin, size_t end) {
    if (end - begin < 64 && end != 1000) short_chunks++;
  });
  EXPECT_EQ(short_chunks.load(), 0u);
}

TEST(ThreadpoolTest, NestedCallsRunInline) {
  std::atomic<long> total{0};
  threadpool::parallel_for(8, 1, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      threadpool::parallel_for(100, 1, [&](size_t b, size_t e) { total += long(e - b); });
    }
  });
  EXPECT_EQ(total.load(), 800);
}

// XNNPACK-style work on the native pool, then parking it, then work on
// both pools again: every item still runs once, on both sides.
TEST(ThreadpoolTest, ParkedNativePoolStillRunsBothPools) {
  threadpool::set_num_threads(2);
  pthreadpool* native = threadpool::native_pool();
  ASSERT_NE(native, nullptr);
  for (int round = 0; round < 3; ++round) {
    std::vector<std::atomic<int>> hits(257);
    threadpool::yield_to_native_pool();
    pthreadpool_parallelize_1d(
        native, [](void* context, size_t i) { (*static_cast<std::vector<std::atomic<int>>*>(context))[i]++; },
        &hits, hits.size(), 0);
    threadpool::park_native_pool();
    threadpool::parallel_for(hits.size(), 1, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) hits[i]++;
    });
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 2) << "round " << round;
  }
  threadpool::set_num_threads(0);
}

// workers_ready() is false with no workers and inside a chunk (a nested
// call runs inline); WorkPoolTest.ReadyOnlyWhileWorkersSpin covers the rest.
TEST(ThreadpoolTest, WorkersReadyNeedsWorkersAndIsFalseInsideAChunk) {
  threadpool::set_num_threads(1);
  EXPECT_FALSE(threadpool::workers_ready());
  threadpool::set_num_threads(2);
  std::atomic<int> ready_inside{0};
  threadpool::parallel_for(4, 1, [&](size_t, size_t) { ready_inside += threadpool::workers_ready(); });
  EXPECT_EQ(ready_inside.load(), 0);
  threadpool::set_num_threads(0);
}

TEST(ThreadpoolTest, ResizeChangesThreadCount) {
  size_t original = threadpool::num_threads();
  threadpool::set_num_threads(1);
  EXPECT_EQ(threadpool::num_threads(), 1u);
  std::atomic<int> sum{0};
  threadpool::parallel_for(10, 1, [&](size_t b, size_t e) { sum += int(e - b); });
  EXPECT_EQ(sum.load(), 10);
  threadpool::set_num_threads(original);
  EXPECT_EQ(threadpool::num_threads(), original);
}

}  // namespace
}  // namespace torchlight
