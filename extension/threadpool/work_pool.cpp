#include "extension/threadpool/work_pool.h"

#include "extension/threadpool/pool_trace.h"

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

// A job word: generation << 32 | chunks. A share's word (WorkPool::Share):
// generation << 32 | begin << 16 | end.
inline uint32_t generation_of(uint64_t word) { return static_cast<uint32_t>(word >> 32); }
inline uint32_t chunks_of(uint64_t job) { return static_cast<uint32_t>(job & 0xFFFF); }
inline uint32_t share_begin(uint64_t word) { return static_cast<uint32_t>((word >> 16) & 0xFFFF); }
inline uint32_t share_end(uint64_t word) { return static_cast<uint32_t>(word & 0xFFFF); }
inline uint64_t pack_share(uint32_t generation, uint32_t begin, uint32_t end) {
  return static_cast<uint64_t>(generation) << 32 | begin << 16 | end;
}
// Whether generation `a` came before `b` (wrapping: a thread is never 2^31
// jobs late).
inline bool older(uint32_t a, uint32_t b) { return static_cast<int32_t>(a - b) < 0; }

// Spins before sleeping: kernels call parallel_for back to back, microseconds
// apart, and a futex wake costs about as much as a small chunk (its call 3 us
// to the caller, 25-35 us until the worker runs, on this session's Xeon). A
// decode step's gap between tokens (sampling) is well inside this.
constexpr int64_t kSpinNs = 100 * 1000;
// The caller's wait for chunks a worker began: pauses before it yields.
constexpr int kWaitSpinsBeforeYield = 4000;
// How long the caller, its own chunks done, lets workers that began the
// job finish before it takes their remaining chunks, and a worker the
// caller: this plus half of its own mean chunk, at most twice this
// (patience()). Workers start 0.3-0.7 us after the caller on this Xeon; a
// longer wait means a slower core (another process on it, or a slow
// phase), and then the chunks are better taken at once.
constexpr int64_t kPatienceNs = 2 * 1000;

int64_t patience(int64_t own_ns, uint32_t own_chunks) {
  const int64_t half_chunk = own_chunks > 0 ? own_ns / (2 * static_cast<int64_t>(own_chunks)) : 0;
  return kPatienceNs + std::min(half_chunk, kPatienceNs);
}
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

WorkPool::WorkPool(size_t threads)
    : threads_(threads > 0 ? threads : 1), shares_(new Share[threads > 0 ? threads : 1]) {
  for (size_t slot = 1; slot < threads_; ++slot) {
    workers_.emplace_back([this, slot] { worker_loop(slot); });
  }
}

WorkPool::~WorkPool() {
  {
    std::lock_guard<std::mutex> lock(sleep_mutex_);
    stop_ = true;
  }
  wake_.notify_all();
  for (std::thread& worker : workers_) worker.join();
}

bool WorkPool::claim(size_t slot, uint64_t job, bool front, uint32_t* index) {
  const uint32_t generation = generation_of(job);
  std::atomic<uint64_t>& range = shares_[slot].range;
  uint64_t word = range.load(std::memory_order_acquire);
  while (true) {
    uint32_t begin, end;
    if (generation_of(word) == generation) {
      begin = share_begin(word);
      end = share_end(word);
    } else if (older(generation_of(word), generation)) {
      // Untouched in this job so far: the whole run. A thread late for a
      // finished job sees either that job's tag (its run exhausted), a
      // newer one, or an older one on a share that job left untouched,
      // which only an empty run does: it never claims.
      const uint64_t chunks = chunks_of(job);
      begin = static_cast<uint32_t>(chunks * slot / threads_);
      end = static_cast<uint32_t>(chunks * (slot + 1) / threads_);
    } else {
      return false;  // A newer job's: this one is over.
    }
    if (begin >= end) return false;
    const uint64_t claimed = front ? pack_share(generation, begin + 1, end)
                                   : pack_share(generation, begin, end - 1);
    if (range.compare_exchange_weak(word, claimed, std::memory_order_acq_rel,
                                    std::memory_order_acquire)) {
      *index = front ? begin : end - 1;
      return true;
    }
  }
}

uint32_t WorkPool::take(size_t share, uint64_t job, bool own, bool count_done) {
  uint32_t ran = 0;
  // The job outlives every claimed chunk (its caller waits for done_), and
  // the job word's acquire showed the fields run() wrote before it.
  const ChunkFn fn = job_.fn.load(std::memory_order_relaxed);
  void* const context = job_.context.load(std::memory_order_relaxed);
  uint32_t index = 0;
  while (claim(share, job, own, &index)) {
    if (own && count_done && ran == 0 && share - 1 < kBeganSlots) {
      began_[share - 1].store(generation_of(job), std::memory_order_relaxed);
    }
    fn(context, index);
    if (count_done) done_.fetch_add(1, std::memory_order_release);
    ++ran;
  }
  return ran;
}

bool WorkPool::began(size_t slot, uint64_t job) const {
  return slot - 1 < kBeganSlots &&
         began_[slot - 1].load(std::memory_order_relaxed) == generation_of(job);
}

uint32_t WorkPool::steal(size_t slot, uint64_t job, bool count_done, bool skip_begun) {
  uint32_t ran = 0;
  // Runs only shrink during a job, so one pass over the others suffices.
  for (size_t step = 1; step < threads_; ++step) {
    const size_t other = (slot + step) % threads_;
    if (other == 0 || (skip_begun && began(other, job))) continue;
    ran += take(other, job, false, count_done);
  }
  return ran;
}

uint32_t WorkPool::steal_from_a_slow_caller(uint64_t job, int64_t own_start_ns, uint32_t own) {
  // The caller is running its run (it always is); it has usually finished
  // and published the next job, or gone on to serial work, within the
  // patience. Only a caller still busy after it (its core shared with
  // another process, or its chunks slower) has its remaining chunks taken.
  const int64_t own_end = now_ns();
  const int64_t wait_ns = patience(own_end - own_start_ns, own);
  int spins = 0;
  while (generation_of(job_.word.load(std::memory_order_acquire)) == generation_of(job)) {
    cpu_relax();
    if (++spins % kSpinsPerClockCheck == 0 && now_ns() - own_end > wait_ns) {
      return take(0, job, false, true);
    }
  }
  return 0;
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

void WorkPool::worker_loop(size_t slot) {
  uint32_t seen = 0;
  int fruitless = 0;  // Spins in a row that ended without a job.
  int64_t stopped_at = 0;  // When `fruitless` last reached kFruitlessSpinsToStop.
  while (true) {
    int spins = 0;
    const int64_t spin_start = now_ns();
    int64_t checked = spin_start;
    // Spinning pays only when jobs come closer together than the spin
    // lasts; when they stop doing so (a loaded machine stretches the gaps),
    // the spin only takes time from the caller: sleep straight away.
    // Every kSpinRetryNs a worker spins once anyway, to notice when they do.
    if (fruitless >= kFruitlessSpinsToStop && checked - stopped_at > kSpinRetryNs) {
      fruitless = kFruitlessSpinsToStop - 1;
    }
    const bool spin = fruitless < kFruitlessSpinsToStop;
    while (spin && generation_of(job_.word.load(std::memory_order_acquire)) == seen &&
           !park_.load(std::memory_order_relaxed)) {
      cpu_relax();
      if (++spins % kSpinsPerClockCheck == 0) {
        // A gap this long between two checks: the scheduler gave this core
        // to another thread, so spinning here takes time the caller needs.
        const int64_t now = now_ns();
        if (now - checked > kDescheduledNs) {
          back_off(now);
          break;
        }
        if (now - spin_start > kSpinNs) break;
        checked = now;
      }
    }
    bool slept = false;
    if (generation_of(job_.word.load(std::memory_order_acquire)) == seen) {
      slept = true;
      if (spin && ++fruitless == kFruitlessSpinsToStop) stopped_at = now_ns();
      std::unique_lock<std::mutex> lock(sleep_mutex_);
      sleeping_.fetch_add(1);
      wake_.wait(lock, [&] { return stop_ || generation_of(job_.word.load()) != seen; });
      sleeping_.fetch_sub(1);
      if (stop_) return;
    } else {
      fruitless = 0;
    }
    const uint64_t job = job_.word.load(std::memory_order_acquire);
    seen = generation_of(job);
    const int64_t seen_ns = now_ns();
    const uint32_t ran = take(slot, job, true, true) + steal(slot, job, true, false);
    if constexpr (pool_trace::kEnabled) {
      if (ran > 0) pool_trace::worker_ran(seen, seen_ns, now_ns(), ran, slept);
    }
    steal_from_a_slow_caller(job, seen_ns, ran);
  }
}

void WorkPool::wake_sleepers() {
  { std::lock_guard<std::mutex> lock(sleep_mutex_); }
  wake_.notify_all();
}

bool WorkPool::ready() const {
  return sleeping_.load(std::memory_order_relaxed) == 0 && !park_.load(std::memory_order_relaxed) &&
         now_ns() >= backoff_until_ns_.load(std::memory_order_relaxed);
}

bool WorkPool::run(size_t chunks, ChunkFn fn, void* context) {
  std::unique_lock<std::mutex> busy(run_mutex_, std::try_to_lock);
  if (!busy.owns_lock()) return false;
  if (chunks == 0) return true;
  if (chunks > kMaxChunks) return false;
  const int64_t start = now_ns();
  if (threads_ == 1 || start < backoff_until_ns_.load(std::memory_order_relaxed)) {
    // Backing off after a stall: every chunk here, the workers left asleep.
    for (size_t i = 0; i < chunks; ++i) fn(context, i);
    if constexpr (pool_trace::kEnabled) pool_trace::caller_ran(0, static_cast<uint32_t>(chunks));
    return true;
  }
  park_.store(false, std::memory_order_relaxed);
  // Only this thread (holding run_mutex_) writes the job, and no chunk of
  // the previous one is left (its caller waited for them).
  const uint64_t job = static_cast<uint64_t>(generation_of(job_.word.load(std::memory_order_relaxed)) + 1) << 32 | chunks;
  job_.fn.store(fn, std::memory_order_relaxed);
  job_.context.store(context, std::memory_order_relaxed);
  job_.word.store(job, std::memory_order_release);
  // Waking sleepers: a worker asleep for a while is seen at once. One that
  // went to sleep just now may not be yet; the sequentially consistent
  // check after this thread's first chunk (by when the job's line has
  // reached the spinning workers, so its fence is cheap) catches it: a
  // worker about to sleep either sees this job or is counted there. A
  // worker that sleeps after a wake here sees the job too (sleep_mutex_).
  const bool woken = sleeping_.load(std::memory_order_relaxed) > 0;
  if (woken) wake_sleepers();
  uint32_t own = 0;
  uint32_t index = 0;
  if (claim(0, job, true, &index)) {
    fn(context, index);
    own = 1;
  }
  if (!woken) {
    std::atomic_thread_fence(std::memory_order_seq_cst);
    if (sleeping_.load() > 0) wake_sleepers();
  }
  own += take(0, job, true, false);
  // The runs of workers that have not begun the job: here, now (the caller
  // never waits for a worker that has not started). Those that have begun
  // are given a while to finish (patience(): a worker starts ~0.5 us after
  // the caller and runs as many chunks) before their remaining chunks are
  // taken too, as from a worker held in a chunk.
  own += steal(0, job, false, true);
  if constexpr (pool_trace::kEnabled) pool_trace::caller_ran(generation_of(job), own);
  const uint32_t done_before = done_target_;
  // Only chunks other threads claimed and are still running remain.
  // (Compared as a wrapping difference: a chunk run twice, which is a bug,
  // shows as a count past the target rather than a hang.)
  const auto short_of_target = [&] {
    const uint32_t target = done_before + (static_cast<uint32_t>(chunks) - own);
    return static_cast<int32_t>(done_.load(std::memory_order_acquire) - target) < 0;
  };
  if (short_of_target()) {
    const int64_t own_end = now_ns();
    const int64_t wait_ns = patience(own_end - start, own);
    bool stolen = false;
    int spins = 0;
    while (short_of_target()) {
      if (!stolen && (spins & 63) == 63 && now_ns() - own_end > wait_ns) {
        own += steal(0, job, false, false);
        stolen = true;
        continue;
      }
      if (++spins < kWaitSpinsBeforeYield) {
        cpu_relax();
      } else {
        std::this_thread::yield();
      }
    }
    const int64_t end = now_ns();
    note_wait(end, end - own_end, own, own_end - start);
  }
  done_target_ = done_before + (static_cast<uint32_t>(chunks) - own);
  return true;
}

}  // namespace threadpool
}  // namespace torchlight
