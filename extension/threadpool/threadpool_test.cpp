#include "extension/threadpool/threadpool.h"

#include <gtest/gtest.h>
#include <pthreadpool.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
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

// A job is dealt in 4 chunks a thread, or 16 when it has 256 items a thread
// or more (a decode step's classifier: 2000 blocks of columns), so a
// faster thread can take more of a large job from a slower one.
TEST(ThreadpoolTest, LargeJobsAreDealtInMoreChunks) {
  threadpool::set_num_threads(2);
  auto chunks_of = [](size_t n) {
    std::atomic<int> chunks{0};
    std::vector<std::atomic<int>> hits(n);
    threadpool::parallel_for(n, 1, [&](size_t begin, size_t end) {
      chunks++;
      for (size_t i = begin; i < end; ++i) hits[i]++;
    });
    for (size_t i = 0; i < n; ++i) EXPECT_EQ(hits[i].load(), 1) << "n=" << n << " i=" << i;
    return chunks.load();
  };
  EXPECT_EQ(chunks_of(18), 6);      // chunks of 3
  EXPECT_EQ(chunks_of(511), 8);     // 4 a thread
  EXPECT_EQ(chunks_of(512), 32);    // 16 a thread
  EXPECT_EQ(chunks_of(2000), 32);   // chunks of 63 (the last 47)
  threadpool::set_num_threads(0);
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

// How many distinct threads ran chunks of a parallel_for of `n` items in
// chunks of one, each chunk waiting (up to `patience`) until `want`
// threads have started one: with fewer threads behind parallel_for the
// wait runs out and the count stays below `want`.
size_t threads_meeting(size_t n, size_t want, std::chrono::milliseconds patience) {
  std::mutex mutex;
  std::condition_variable met;
  std::set<std::thread::id> seen;
  threadpool::parallel_for(n, 1, [&](size_t, size_t) {
    std::unique_lock<std::mutex> lock(mutex);
    seen.insert(std::this_thread::get_id());
    met.notify_all();
    met.wait_for(lock, patience, [&] { return seen.size() >= want; });
  });
  return seen.size();
}

// In a NativePoolScope, parallel_for's chunks run on the given pthreadpool
// (here one of three threads beside a WorkPool of two, so three threads at
// once can only be that pool's); every item still runs once, nested calls
// still run inline, and the scope's end brings the WorkPool back.
TEST(ThreadpoolTest, NativePoolScopeRunsChunksOnThatPthreadpool) {
  threadpool::set_num_threads(2);
  pthreadpool_t three = pthreadpool_create(3);
  ASSERT_NE(three, nullptr);
  {
    threadpool::NativePoolScope scope(three);
    EXPECT_EQ(threads_meeting(12, 3, std::chrono::seconds(5)), 3u);
    std::vector<std::atomic<int>> hits(1001);
    threadpool::parallel_for(hits.size(), 7, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        threadpool::parallel_for(3, 1, [&](size_t b, size_t e) { hits[i] += int(e - b); });
      }
    });
    for (size_t i = 0; i < hits.size(); ++i) ASSERT_EQ(hits[i].load(), 3) << "item " << i;
    threadpool::NativePoolScope no_pool(nullptr);  // Changes nothing.
    EXPECT_EQ(threads_meeting(12, 3, std::chrono::seconds(5)), 3u);
  }
  EXPECT_LE(threads_meeting(4, 3, std::chrono::milliseconds(100)), 2u);
  pthreadpool_destroy(three);
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
