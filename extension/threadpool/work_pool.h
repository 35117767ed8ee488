// WorkPool: the threads behind threadpool::parallel_for.
//
// A job is a number of chunks that the caller and the workers claim one at a
// time from a shared counter. The caller runs chunks too and returns as soon
// as every chunk has finished: it never waits for a worker that has not
// claimed one. On a loaded machine a descheduled worker therefore costs the
// caller nothing but that worker's share of the speed-up, where a pool that
// waits for every thread to check in (pthreadpool) stalls for the worker's
// whole time slice, milliseconds.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
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

  size_t threads() const { return workers_.size() + 1; }

  /// Calls fn(context, i) once for every i in [0, chunks), on the caller
  /// and the workers; returns when all have returned. A second caller while
  /// a job runs (or a job of 2^32 - 1 chunks or more) gets false and should
  /// run the job itself.
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
  /// Workers spin a while after a job before they sleep, as jobs come back
  /// to back; after a few spins in a row that saw no job (jobs further apart
  /// than a spin, as on a loaded machine) they sleep at once, spinning again
  /// on a probe every 50 ms.
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
  void worker_loop();
  // Claims the next chunk of job `generation`; false when that job has no
  // chunk left or is over.
  bool claim(uint32_t generation, uint32_t* index);
  // Runs chunks of job `generation` until none is left; returns how many.
  uint32_t run_chunks(uint32_t generation);
  // After a caller waited `wait_ns` for other threads' chunks, having run
  // `own` chunks itself in `own_ns`: starts a back-off if that was a stall.
  void note_wait(int64_t now_ns, int64_t wait_ns, uint32_t own, int64_t own_ns);
  // Counts a stall and starts (or lengthens) a back-off from `now_ns`.
  void back_off(int64_t now_ns);

  // The job: written before its generation is published, read after a claim.
  std::atomic<ChunkFn> fn_{nullptr};
  std::atomic<void*> context_{nullptr};
  std::atomic<uint32_t> chunks_{0};
  // generation << 32 | next chunk to claim.
  std::atomic<uint64_t> state_{0};
  std::atomic<uint32_t> done_{0};  // chunks of the current job that finished

  std::mutex run_mutex_;  // one job at a time
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
