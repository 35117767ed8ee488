#include "extension/threadpool/work_pool.h"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#endif

namespace torchlight {
namespace threadpool {
namespace {

inline void cpu_relax() {
#if defined(__x86_64__) || defined(__i386__)
  _mm_pause();
#else
  std::this_thread::yield();
#endif
}

inline uint32_t generation_of(uint64_t state) { return static_cast<uint32_t>(state >> 32); }

// The next-chunk value of a closed generation: no job has that many chunks,
// so every claim against it fails.
constexpr uint32_t kClosed = UINT32_MAX;

// Spins before sleeping: kernels call parallel_for back to back, microseconds
// apart, and a futex wake costs about as much as a small chunk.
constexpr int kSpinsBeforeSleep = 4000;

}  // namespace

WorkPool::WorkPool(size_t threads) {
  for (size_t i = 1; i < threads; ++i) workers_.emplace_back([this] { worker_loop(); });
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool WorkPool::claim(uint32_t generation, uint32_t* index) {
  uint64_t state = state_.load(std::memory_order_acquire);
  while (true) {
    // A newer job means this one is over. chunks_ may already be a newer
    // job's: its (acquire) load then shows that run() closed this generation
    // before writing it, so the exchange below fails.
    if (generation_of(state) != generation) return false;
    const auto next = static_cast<uint32_t>(state);
    if (next >= chunks_.load(std::memory_order_acquire)) return false;
    if (state_.compare_exchange_weak(state, state + 1, std::memory_order_acq_rel,
                                     std::memory_order_acquire)) {
      *index = next;
      return true;
    }
  }
}

void WorkPool::run_chunks(uint32_t generation) {
  uint32_t index = 0;
  while (claim(generation, &index)) {
    // The job outlives every claimed chunk: its caller waits for done_.
    fn_.load(std::memory_order_relaxed)(context_.load(std::memory_order_relaxed), index);
    done_.fetch_add(1, std::memory_order_release);
  }
}

void WorkPool::worker_loop() {
  uint32_t seen = 0;
  while (true) {
    int spins = 0;
    while (generation_of(state_.load(std::memory_order_acquire)) == seen &&
           spins < kSpinsBeforeSleep && !park_.load(std::memory_order_relaxed)) {
      cpu_relax();
      ++spins;
    }
    if (generation_of(state_.load(std::memory_order_acquire)) == seen) {
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleeping_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_ || generation_of(state_.load()) != seen; });
      sleeping_.fetch_sub(1);
      if (stop_) return;
    }
    seen = generation_of(state_.load(std::memory_order_acquire));
    run_chunks(seen);
  }
}

bool WorkPool::run(size_t chunks, ChunkFn fn, void* context) {
  std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
  if (!busy.owns_lock()) return false;
  if (chunks == 0) return true;
  if (chunks >= kClosed) return false;
  // Close the previous job's generation before touching the job fields: a
  // worker still inside claim() holds that job's exhausted (generation, next)
  // and, reading the new chunks_, would otherwise claim one more chunk of the
  // old generation and run it on the new job, which then runs it again.
  park_.store(false, std::memory_order_relaxed);
  const uint32_t closed = generation_of(state_.load(std::memory_order_relaxed)) + 1;
  state_.store(static_cast<uint64_t>(closed) << 32 | kClosed);
  fn_.store(fn, std::memory_order_relaxed);
  context_.store(context, std::memory_order_relaxed);
  done_.store(0, std::memory_order_relaxed);
  chunks_.store(static_cast<uint32_t>(chunks), std::memory_order_release);
  // Publishes the job (release) in a generation of its own, chunk counter at
  // 0. Sequentially consistent with the sleepers' count, so a worker that is
  // about to sleep either sees this generation or is counted and woken below.
  const uint32_t generation = closed + 1;
  state_.store(static_cast<uint64_t>(generation) << 32);
  if (sleeping_.load() > 0) {
    { std::lock_guard<std::mutex> lock(sleep_mutex_); }
    wake_.notify_all();
  }
  run_chunks(generation);
  // Only chunks other threads claimed and are still running remain.
  int spins = 0;
  while (done_.load(std::memory_order_acquire) < chunks) {
    if (++spins < kSpinsBeforeSleep) {
      cpu_relax();
    } else {
      std::this_thread::yield();
    }
  }
  return true;
}

}  // namespace threadpool
}  // namespace torchlight
