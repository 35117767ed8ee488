#include "extension/threadpool/work_pool.h"

#include <algorithm>
#include <chrono>

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
// After this many spins in a row that saw no job, a worker sleeps without
// spinning, trying one spin again every kSpinRetryNs.
constexpr int kFruitlessSpinsToStop = 4;
constexpr int64_t kSpinRetryNs = 50 * 1000 * 1000;

// Stall detection (WorkPool::run): a wait for other threads' chunks longer
// than kStallRatio times what the caller spent on its own chunks, plus
// kStallSlackNs (about a scheduler time slice), means a worker lost its core
// mid-chunk. Against the caller's total, not its mean chunk: a job's last
// chunk may be much smaller than the others. Back-offs start at
// kMinBackoffNs and double, up to kMaxBackoffNs, for stalls within
// kStallMemoryNs of the previous one.
constexpr int64_t kStallRatio = 4;
constexpr int64_t kStallSlackNs = 1000 * 1000;
constexpr int64_t kMinBackoffNs = 4 * 1000 * 1000;
constexpr int64_t kMaxBackoffNs = 256 * 1000 * 1000;
constexpr int64_t kStallMemoryNs = 1000 * 1000 * 1000;
// A spinning worker reads the clock every kSpinsPerClockCheck pauses (about
// a microsecond); a gap over kDescheduledNs means it lost its core, which
// counts as a stall too.
constexpr int kSpinsPerClockCheck = 64;
constexpr int64_t kDescheduledNs = 500 * 1000;

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

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

uint32_t WorkPool::run_chunks(uint32_t generation) {
  uint32_t index = 0;
  uint32_t ran = 0;
  while (claim(generation, &index)) {
    // The job outlives every claimed chunk: its caller waits for done_.
    fn_.load(std::memory_order_relaxed)(context_.load(std::memory_order_relaxed), index);
    done_.fetch_add(1, std::memory_order_release);
    ++ran;
  }
  return ran;
}

void WorkPool::note_wait(int64_t now, int64_t wait_ns, uint32_t own, int64_t own_ns) {
  // With no chunk of its own the caller has no measure of a chunk's length:
  // the workers took them all, which is no stall.
  if (own == 0 || wait_ns <= kStallRatio * own_ns + kStallSlackNs) return;
  back_off(now);
}

void WorkPool::back_off(int64_t now) {
  stalls_.fetch_add(1, std::memory_order_relaxed);
  // Racing callers of this (the caller and a worker) at worst pick another
  // length; every value stored is a valid back-off.
  const int64_t last = last_stall_ns_.exchange(now, std::memory_order_relaxed);
  const int64_t previous = backoff_ns_.load(std::memory_order_relaxed);
  const int64_t length = previous > 0 && now - last < kStallMemoryNs
                             ? std::min(2 * previous, kMaxBackoffNs)
                             : kMinBackoffNs;
  backoff_ns_.store(length, std::memory_order_relaxed);
  backoff_until_ns_.store(now + length, std::memory_order_relaxed);
}

void WorkPool::worker_loop() {
  uint32_t seen = 0;
  int fruitless = 0;  // Spins in a row that ended without a job.
  int64_t stopped_at = 0;  // When `fruitless` last reached kFruitlessSpinsToStop.
  while (true) {
    int spins = 0;
    int64_t checked = now_ns();
    // Spinning pays only when jobs come closer together than the spin
    // lasts; when they stop doing so (a loaded machine stretches the gaps),
    // the spin only takes time from the caller: sleep straight away.
    // Every kSpinRetryNs a worker spins once anyway, to notice when they do.
    if (fruitless >= kFruitlessSpinsToStop && checked - stopped_at > kSpinRetryNs) {
      fruitless = kFruitlessSpinsToStop - 1;
    }
    const int budget = fruitless >= kFruitlessSpinsToStop ? 0 : kSpinsBeforeSleep;
    while (generation_of(state_.load(std::memory_order_acquire)) == seen &&
           spins < budget && !park_.load(std::memory_order_relaxed)) {
      cpu_relax();
      if (++spins % kSpinsPerClockCheck == 0) {
        // A gap this long between two checks: the scheduler gave this core
        // to another thread, so spinning here takes time the caller needs.
        const int64_t now = now_ns();
        if (now - checked > kDescheduledNs) {
          back_off(now);
          break;
        }
        checked = now;
      }
    }
    if (generation_of(state_.load(std::memory_order_acquire)) == seen) {
      if (budget > 0 && ++fruitless == kFruitlessSpinsToStop) stopped_at = now_ns();
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleeping_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_ || generation_of(state_.load()) != seen; });
      sleeping_.fetch_sub(1);
      if (stop_) return;
    } else {
      fruitless = 0;
    }
    seen = generation_of(state_.load(std::memory_order_acquire));
    run_chunks(seen);
  }
}

bool WorkPool::ready() const {
  return sleeping_.load(std::memory_order_relaxed) == 0 && !park_.load(std::memory_order_relaxed) &&
         now_ns() >= backoff_until_ns_.load(std::memory_order_relaxed);
}

bool WorkPool::run(size_t chunks, ChunkFn fn, void* context) {
  std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
  if (!busy.owns_lock()) return false;
  if (chunks == 0) return true;
  if (chunks >= kClosed) return false;
  const int64_t start = now_ns();
  if (start < backoff_until_ns_.load(std::memory_order_relaxed)) {
    // Backing off after a stall: every chunk here, the workers left asleep.
    for (size_t i = 0; i < chunks; ++i) fn(context, i);
    return true;
  }
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
  const uint32_t own = run_chunks(generation);
  // Only chunks other threads claimed and are still running remain.
  if (done_.load(std::memory_order_acquire) < chunks) {
    const int64_t own_end = now_ns();
    int spins = 0;
    while (done_.load(std::memory_order_acquire) < chunks) {
      if (++spins < kSpinsBeforeSleep) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    const int64_t end = now_ns();
    note_wait(end, end - own_end, own, own_end - start);
  }
  return true;
}

}  // namespace threadpool
}  // namespace torchlight
