// WorkPool: the threads behind threadpool::parallel_for.
//
// A job is a number of chunks, dealt out up front: each thread (the caller
// and every worker) owns an equal run of them, in a word on a cache line of
// its own, and takes them from the front; one whose run is empty steals from
// the back of the others' (workers from the caller's only when it is still
// busy a short while after them). So a decode step's calls, of a few microseconds each, move few
// cache lines between cores (a shared counter moved one per chunk, about
// 0.1 us each on this Xeon), and the caller never waits for a worker that
// has not started: it takes that worker's whole run. A worker that has begun
// the job (it says so on the line of the finished-chunk count, which the
// caller reads anyway) is given a short while to finish before the caller
// takes its remaining chunks: reading a running worker's run moves its line
// to the caller, and the worker's next claim then misses (session 19: the
// two probes cost a stories15m decode call ~0.2-0.4 us of its ~4). The
// caller waits only for a chunk a worker has begun, which on a loaded
// machine may be a time slice (pthreadpool waits for every thread to check
// in, always).
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

namespace torchlight {
namespace threadpool {

class WorkPool {
 public:
  /// Runs chunk `index` of a job.
  using ChunkFn = void (*)(void* context, size_t index);

  /// `threads` counts the caller: threads - 1 workers are started.
  explicit WorkPool(size_t threads);
  ~WorkPool();
  WorkPool(const WorkPool&) = delete;
  WorkPool& operator=(const WorkPool&) = delete;

  size_t threads() const { return threads_; }

  /// The most chunks a job may have (run() refuses more).
  static constexpr size_t kMaxChunks = 0xFFFF;

  /// Calls fn(context, i) once for every i in [0, chunks), on the caller
  /// and the workers; returns when all have returned. A second caller while
  /// a job runs (or a job of more than kMaxChunks chunks) gets false and
  /// should run the job itself.
  ///
  /// Stalls: when the caller, its own chunks done, waits for a worker's
  /// chunk far longer than its own chunks took (that worker was descheduled
  /// mid-chunk), or a spinning worker sees the clock jump (it was
  /// descheduled while waiting for work), another process holds the cores.
  /// For a back-off time after that (4 ms, doubling while stalls keep
  /// coming, up to 256 ms) run() runs every chunk on the caller, so callers
  /// do not wait a time slice per call, and the workers sleep instead of
  /// spinning against the caller for a loaded machine's scarce CPU time.
  ///
  /// Workers spin a while (about 100 us) after a job before they sleep, as
  /// jobs come back to back; after a few spins in a row that saw no job
  /// (jobs further apart than a spin, as on a loaded machine) they sleep at
  /// once, spinning again on a probe every 50 ms.
  bool run(size_t chunks, ChunkFn fn, void* context);

  /// Whether a job run now would find every worker awake (spinning, none
  /// asleep) and no back-off on. Only then is a job of a few microseconds
  /// worth splitting: waking a sleeping worker costs about as much, and a
  /// back-off means another process holds the cores. A hint: it can change
  /// before the job starts, which costs speed only.
  bool ready() const;

  /// Stalls seen so far (each started a back-off), for tests and benchmarks.
  uint64_t stalls() const { return stalls_.load(std::memory_order_relaxed); }

  /// Sends spinning workers to sleep now instead of after their spin, until
  /// the next run(). For a caller about to hand the cores to another pool
  /// (XNNPACK's pthreadpool): with as many threads as cores, a worker spinning
  /// here would hold the core that pool's worker needs, and that pool waits
  /// for every worker, so each of its jobs would last a time slice.
  void park() { park_.store(true, std::memory_order_relaxed); }

 private:
  // One thread's run of a job's chunks, [begin, end), tagged with the job's
  // generation: bits 32-63 generation, 16-31 begin, 0-15 end. A share whose
  // tag is older than the job holds that job's whole run, implicitly: the
  // first claim writes it, so run() does not touch the workers' lines.
  struct alignas(64) Share {
    std::atomic<uint64_t> range{0};
  };

  void worker_loop(size_t slot);
  // Takes the next chunk of job `job` (its generation << 32 | chunks) from
  // the front of share `slot` (its owner) or its back (another thread);
  // false when that run is empty or the share belongs to a newer job.
  bool claim(size_t slot, uint64_t job, bool front, uint32_t* index);
  // Runs chunks of job `job` from share `share` until it is empty: from
  // the front when it is the thread's own (`own`), else from the back.
  // Returns how many it ran; a worker (`count_done`) adds each to done_ as
  // it finishes, and records in began_ that it began its own run.
  uint32_t take(size_t share, uint64_t job, bool own, bool count_done);
  // Whether the worker in `slot` has begun job `job` (began_).
  bool began(size_t slot, uint64_t job) const;
  // take() from the backs of the shares of the threads other than `slot`,
  // except the caller's (share 0: see steal_from_a_slow_caller) and, when
  // `skip_begun`, those of workers that began the job.
  uint32_t steal(size_t slot, uint64_t job, bool count_done, bool skip_begun);
  // A worker that ran `own` chunks since `own_start_ns`, none left to it:
  // waits a short while for the job to end (the next job to be published),
  // then takes what is left of the caller's run.
  uint32_t steal_from_a_slow_caller(uint64_t job, int64_t own_start_ns, uint32_t own);
  // After a caller waited `wait_ns` for other threads' chunks, having run
  // `own` chunks itself in `own_ns`: starts a back-off if that was a stall.
  void note_wait(int64_t now_ns, int64_t wait_ns, uint32_t own, int64_t own_ns);
  // Wakes every sleeping worker (after the job word was stored).
  void wake_sleepers();
  // Counts a stall and starts (or lengthens) a back-off from `now_ns`.
  void back_off(int64_t now_ns);

  size_t threads_;
  std::unique_ptr<Share[]> shares_;  // [threads_]: the caller's is 0

  // The job, on one line a spinning worker reads once per job: its
  // generation << 32 | its chunks (one word, so a reader never pairs one
  // job's generation with another's size), stored (release) after fn and
  // context.
  struct alignas(64) Job {
    std::atomic<uint64_t> word{0};
    std::atomic<ChunkFn> fn{nullptr};
    std::atomic<void*> context{nullptr};
  } job_;
  // Chunks workers finished, over all jobs (wrapping): the caller waits for
  // it to reach done_target_, so nothing resets it between jobs. On the
  // same line, the generation of the last job each worker began (slot s at
  // began_[s - 1]; workers past kBeganSlots are never counted as begun): the
  // caller reads this line anyway, so it learns which workers are running
  // without reading their shares (each such read moves a share's line to
  // the caller, and its owner's next claim then misses, ~0.2 us a job).
  static constexpr size_t kBeganSlots = 15;
  alignas(64) std::atomic<uint32_t> done_{0};
  std::atomic<uint32_t> began_[kBeganSlots] = {};
  uint32_t done_target_ = 0;  // guarded by run_mutex_

  alignas(64) std::mutex run_mutex_;  // one job at a time
  std::mutex sleep_mutex_;
  std::condition_variable wake_;
  std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> park_{false};  // see park(); cleared by run()
  bool stop_ = false;  // guarded by sleep_mutex_
  // Back-off after stalls (see run()), steady-clock nanoseconds; written by
  // the caller and by spinning workers.
  std::atomic<int64_t> backoff_until_ns_{0};
  std::atomic<int64_t> backoff_ns_{0};  // the last back-off's length (0: none yet)
  std::atomic<int64_t> last_stall_ns_{0};
  std::atomic<uint64_t> stalls_{0};
  std::vector<std::thread> workers_;
};

}  // namespace threadpool
}  // namespace torchlight
