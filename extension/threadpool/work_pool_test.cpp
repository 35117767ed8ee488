#include "extension/threadpool/work_pool.h"

#include <gtest/gtest.h>
#include <pthread.h>
#include <sched.h>

#include <atomic>
#include <chrono>
#include <random>
#include <thread>
#include <vector>

#include "extension/threadpool/threadpool.h"

namespace torchlight {
namespace threadpool {
namespace {

void pin_to_cpu(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
}

struct Counts {
  std::vector<std::atomic<int>> hits;
  explicit Counts(size_t n) : hits(n) {}
  static void run(void* self, size_t index) { static_cast<Counts*>(self)->hits[index]++; }
};

// Thousands of jobs back to back, of random sizes (workers that wake late
// find the next job, not a stale one): every chunk runs exactly once.
TEST(WorkPoolTest, BackToBackJobsRunEveryChunkOnce) {
  for (size_t threads : {size_t{1}, size_t{2}, size_t{4}}) {
    WorkPool pool(threads);
    EXPECT_EQ(pool.threads(), threads);
    std::mt19937 rng(7);
    for (int job = 0; job < 3000; ++job) {
      const size_t chunks = rng() % 17;
      Counts counts(chunks);
      ASSERT_TRUE(pool.run(chunks, &Counts::run, &counts));
      for (size_t i = 0; i < chunks; ++i) {
        ASSERT_EQ(counts.hits[i].load(), 1) << "threads " << threads << " job " << job;
      }
    }
  }
}

// A small job after a large one, a million times, with more threads than
// cores: a worker still claiming from the finished job must not claim a chunk
// against the next job's size (it ran that chunk twice before run() closed the
// old generation first; this loop caught it in every run).
TEST(WorkPoolTest, WorkerLateInClaimNeverRunsANewJobsChunkTwice) {
  struct Hits {
    std::atomic<int> at[40];
    static void run(void* self, size_t index) { static_cast<Hits*>(self)->at[index]++; }
  };
  WorkPool pool(3);
  int wrong = 0;
  for (int job = 0; job < 1000000; ++job) {
    const size_t chunks = (job & 1) ? 2 : 40;
    Hits hits;
    for (std::atomic<int>& h : hits.at) h.store(0, std::memory_order_relaxed);
    ASSERT_TRUE(pool.run(chunks, &Hits::run, &hits));
    for (size_t i = 0; i < 40; ++i) wrong += hits.at[i].load() != (i < chunks ? 1 : 0);
  }
  EXPECT_EQ(wrong, 0);
}

// park() between jobs (what the XNNPACK delegate does before handing the
// cores to its pthreadpool) sends workers to sleep; the next run() wakes
// them, and every chunk still runs exactly once.
TEST(WorkPoolTest, ParkBetweenJobsKeepsEveryChunkOnce) {
  WorkPool pool(3);
  std::mt19937 rng(11);
  for (int job = 0; job < 2000; ++job) {
    const size_t chunks = 1 + rng() % 16;
    Counts counts(chunks);
    if (job % 2 == 0) pool.park();
    if (job % 7 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));  // let them sleep
    ASSERT_TRUE(pool.run(chunks, &Counts::run, &counts));
    for (size_t i = 0; i < chunks; ++i) ASSERT_EQ(counts.hits[i].load(), 1) << "job " << job;
  }
}

// ready(): not while a worker sleeps (a pause far past its spin) or is
// parked; a job wakes it, and it is ready while it spins for the next. On
// a loaded machine the spinning worker loses its core, notices, and backs
// off (ready() false meanwhile), so a round that saw a stall proves
// nothing about the spin and is not held against it.
TEST(WorkPoolTest, ReadyOnlyWhileWorkersSpin) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "needs two cores";
  cpu_set_t before;
  ASSERT_EQ(pthread_getaffinity_np(pthread_self(), sizeof(before), &before), 0);
  if (!CPU_ISSET(0, &before) || !CPU_ISSET(1, &before)) GTEST_SKIP() << "needs cores 0 and 1";
  pin_to_cpu(0);
  WorkPool pool(2);
  const auto until = [](WorkPool* p, bool want) {
    // Polled: on a loaded machine the worker may wait a while for a core.
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (p->ready() != want && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
    }
    return p->ready() == want;
  };
  for (int round = 0; round < 2; ++round) {
    EXPECT_TRUE(until(&pool, false)) << "the idle worker never slept, round " << round;
    // Jobs one of whose chunks ran on the worker: right after one the
    // worker is awake, spinning for the next. This thread and the worker
    // are pinned to cores 0 and 1: woken onto this thread's core, as the
    // scheduler may place it, the worker would run and spin while this
    // thread waits for the core, and sleep before this thread looks. The
    // caller's chunk waits for the worker's without yielding its core.
    struct Meet {
      std::thread::id caller = std::this_thread::get_id();
      std::atomic<bool> on_worker{false};
      static void run(void* ctx, size_t) {
        auto* meet = static_cast<Meet*>(ctx);
        if (std::this_thread::get_id() != meet->caller) {
          pin_to_cpu(1);  // This test's own pool: its worker alone.
          meet->on_worker = true;
          return;
        }
        const auto give_up = std::chrono::steady_clock::now() + std::chrono::milliseconds(50);
        while (!meet->on_worker && std::chrono::steady_clock::now() < give_up) {
        }
      }
    };
    const uint64_t stalls = pool.stalls();
    int met = 0;
    bool woke = false;
    for (int attempt = 0; attempt < 200 && !woke; ++attempt) {
      Meet meet;
      ASSERT_TRUE(pool.run(2, &Meet::run, &meet));
      const bool ready = pool.ready();
      if (!meet.on_worker) continue;
      ++met;
      woke = ready;
    }
    if (met > 0 && pool.stalls() == stalls) {
      EXPECT_TRUE(woke) << "a worker that ran a chunk was never seen awake, round " << round
                        << " (" << met << " tries)";
    }
    pool.park();
    EXPECT_FALSE(pool.ready());
  }
  pthread_setaffinity_np(pthread_self(), sizeof(before), &before);
}

// A worker held inside its first chunk (as when it loses its core there)
// does not hold up the rest of the job: the caller runs its own run of
// chunks, then takes the worker's remaining ones from the back of its
// share. The worker's chunk waits (up to 5 s) until the caller has run
// every other chunk, so without stealing the caller would be left waiting
// and the worker would give up first.
TEST(WorkPoolTest, CallerTakesTheChunksOfAWorkerHeldInAChunk) {
  WorkPool pool(2);
  struct Job {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> on_caller{0};
    std::atomic<int> on_worker{0};
    std::atomic<bool> gave_up{false};
    std::atomic<int> hits[8] = {};
    static void run(void* ctx, size_t index) {
      auto* job = static_cast<Job*>(ctx);
      job->hits[index]++;
      if (std::this_thread::get_id() == job->caller) {
        // Long enough for a worker to wake and claim a chunk of its own.
        const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(100);
        while (std::chrono::steady_clock::now() < until) {
        }
        job->on_caller++;
        return;
      }
      if (job->on_worker++ > 0) return;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (job->on_caller.load() < 7) {
        if (std::chrono::steady_clock::now() > deadline) {
          job->gave_up = true;
          return;
        }
        std::this_thread::yield();
      }
    }
  };
  // The worker may not wake before the caller has run every chunk itself:
  // retry until a job saw it hold one.
  int held = 0;
  for (int attempt = 0; attempt < 200 && held < 3; ++attempt) {
    Job job;
    ASSERT_TRUE(pool.run(8, &Job::run, &job));
    for (std::atomic<int>& h : job.hits) ASSERT_EQ(h.load(), 1) << "attempt " << attempt;
    if (job.on_worker.load() == 0) continue;
    ++held;
    EXPECT_FALSE(job.gave_up.load()) << "the caller left the held worker's chunks waiting";
    EXPECT_EQ(job.on_worker.load(), 1);
    EXPECT_EQ(job.on_caller.load(), 7);
  }
  EXPECT_GT(held, 0) << "the worker never ran a chunk in 200 jobs";
}

// A caller held inside its first chunk (as when another process takes its
// core) does not hold up the rest of its run: a worker, its own run done,
// waits a short while and then takes the caller's remaining chunks from the
// back of its share. The caller's first chunk waits (up to 5 s) until every
// other chunk has run, so without that the worker would wait for the
// caller, and the caller would give up first.
TEST(WorkPoolTest, WorkerTakesTheChunksOfACallerHeldInAChunk) {
  WorkPool pool(2);
  struct Job {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> on_caller{0};
    std::atomic<int> on_worker{0};
    std::atomic<bool> gave_up{false};
    std::atomic<int> hits[8] = {};
    static void run(void* ctx, size_t index) {
      auto* job = static_cast<Job*>(ctx);
      job->hits[index]++;
      if (std::this_thread::get_id() != job->caller) {
        job->on_worker++;
        return;
      }
      if (job->on_caller++ > 0 || index != 0) return;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
      while (job->on_worker.load() < 7) {
        if (std::chrono::steady_clock::now() > deadline) {
          job->gave_up = true;
          return;
        }
        std::this_thread::yield();
      }
    }
  };
  // The worker may not wake before the caller has run every chunk itself,
  // or (woken late by the caller) may take the whole job before the caller
  // claims a chunk: retry until a job saw both run.
  int helped = 0;
  for (int attempt = 0; attempt < 200 && helped < 3; ++attempt) {
    Counts warm(64);
    for (int i = 0; i < 5; ++i) ASSERT_TRUE(pool.run(warm.hits.size(), &Counts::run, &warm));
    Job job;
    ASSERT_TRUE(pool.run(8, &Job::run, &job));
    for (std::atomic<int>& h : job.hits) ASSERT_EQ(h.load(), 1) << "attempt " << attempt;
    if (job.on_worker.load() == 0 || job.on_caller.load() == 0) continue;
    ++helped;
    EXPECT_FALSE(job.gave_up.load()) << "the worker left the held caller's chunks waiting";
    EXPECT_EQ(job.on_worker.load(), 7);
    EXPECT_EQ(job.on_caller.load(), 1);
  }
  EXPECT_GT(helped, 0) << "the worker never ran a chunk in 200 jobs";
}

// Jobs of fewer chunks than threads leave some threads' runs empty (their
// shares untouched); a larger job after them still runs every chunk once.
TEST(WorkPoolTest, JobsSmallerThanThePoolThenLargerOnes) {
  WorkPool pool(4);
  for (int job = 0; job < 20000; ++job) {
    const size_t chunks = job % 3 == 2 ? 11 : static_cast<size_t>(job % 3 + 1);
    Counts counts(chunks);
    ASSERT_TRUE(pool.run(chunks, &Counts::run, &counts));
    for (size_t i = 0; i < chunks; ++i) ASSERT_EQ(counts.hits[i].load(), 1) << "job " << job;
  }
}

// More chunks than a job may have: refused, for the caller to run itself.
TEST(WorkPoolTest, RefusesMoreChunksThanItCanDeal) {
  WorkPool pool(2);
  EXPECT_FALSE(pool.run(WorkPool::kMaxChunks + 1, &Counts::run, nullptr));
  Counts counts(WorkPool::kMaxChunks);
  ASSERT_TRUE(pool.run(WorkPool::kMaxChunks, &Counts::run, &counts));
  for (size_t i = 0; i < WorkPool::kMaxChunks; ++i) ASSERT_EQ(counts.hits[i].load(), 1) << i;
}

// The caller returns only when chunks other threads claimed have finished.
TEST(WorkPoolTest, RunReturnsAfterSlowChunksFinish) {
  WorkPool pool(3);
  for (int round = 0; round < 50; ++round) {
    std::atomic<int> finished{0};
    auto slow = [](void* ctx, size_t index) {
      if (index % 2 == 0) std::this_thread::sleep_for(std::chrono::microseconds(200));
      static_cast<std::atomic<int>*>(ctx)->fetch_add(1);
    };
    ASSERT_TRUE(pool.run(6, slow, &finished));
    EXPECT_EQ(finished.load(), 6);
  }
}

// A worker's chunk that outlasts the caller's by far more than a time slice
// (as when the worker loses its core mid-chunk) is a stall: the pool counts
// it and runs the next jobs on the caller alone, every chunk still once.
TEST(WorkPoolTest, StallBacksOffToTheCaller) {
  WorkPool pool(2);
  struct Job {
    std::thread::id caller = std::this_thread::get_id();
    std::atomic<int> finished{0};
    std::atomic<int> on_workers{0};
    bool stall_workers = true;
    static void run(void* ctx, size_t) {
      auto* job = static_cast<Job*>(ctx);
      // The caller's chunk: 2 ms (time for a sleeping worker to wake and
      // claim the other); a worker's: 30 ms, far over 4 x 2 ms + 1 ms.
      if (std::this_thread::get_id() != job->caller) {
        job->on_workers++;
        if (job->stall_workers) std::this_thread::sleep_for(std::chrono::milliseconds(30));
      } else if (job->stall_workers) {
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
      }
      job->finished++;
    }
  };
  // The caller may still claim both chunks before the worker wakes, or be
  // descheduled itself: try until a stall is seen.
  bool stalled = false;
  for (int attempt = 0; attempt < 50 && !stalled; ++attempt) {
    const uint64_t before = pool.stalls();
    Job job;
    ASSERT_TRUE(pool.run(2, &Job::run, &job));
    EXPECT_EQ(job.finished.load(), 2);
    const auto stalled_at = std::chrono::steady_clock::now();
    // A stall needs a chunk on each side (the caller times its own), and
    // this thread not held up itself for longer than the worker's sleep.
    if (job.on_workers.load() != 1 || pool.stalls() == before) continue;
    stalled = true;
    // Within the 4 ms back-off (when this thread was not itself held up
    // longer), every chunk runs here.
    Job next;
    next.stall_workers = false;
    ASSERT_TRUE(pool.run(64, &Job::run, &next));
    EXPECT_EQ(next.finished.load(), 64);
    if (std::chrono::steady_clock::now() - stalled_at < std::chrono::milliseconds(3)) {
      EXPECT_EQ(next.on_workers.load(), 0);
      EXPECT_FALSE(pool.ready());  // Small jobs stay on the caller too.
    }
  }
  EXPECT_TRUE(stalled) << "no stall seen in 50 jobs with a 30 ms worker chunk";
}

// A second caller while a job runs is told to run its own work: no deadlock,
// no lost chunk.
TEST(WorkPoolTest, ConcurrentCallersEachGetAllTheirItems) {
  std::vector<std::thread> callers;
  std::atomic<int> failures{0};
  for (int c = 0; c < 3; ++c) {
    callers.emplace_back([&, c] {
      for (int job = 0; job < 500; ++job) {
        const size_t n = 64 + (job + c) % 50;
        std::vector<std::atomic<int>> hits(n);
        parallel_for(n, 4, [&](size_t begin, size_t end) {
          for (size_t i = begin; i < end; ++i) hits[i]++;
        });
        for (size_t i = 0; i < n; ++i) failures += hits[i].load() != 1;
      }
    });
  }
  for (std::thread& t : callers) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace threadpool
}  // namespace torchlight
