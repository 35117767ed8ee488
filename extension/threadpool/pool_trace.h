// An opt-in timeline of the thread pool, for finding where a decode step's
// time goes between parallel_for calls (bench/threadpool/pool_timeline.py
// reads it). Built only with -DTORCHLIGHT_POOL_TRACE=ON (kEnabled false
// otherwise, and every hook compiles to nothing); then a process run with
// TORCHLIGHT_POOL_TRACE=FILE writes FILE at exit: per parallel_for call on
// the calling thread (not nested ones) its start and end, how it ran
// (inline, on the pool, or the pool refused / backed off), its items and
// chunks, the chunks the caller ran and when it had run them; per pool job
// when a worker saw it, when it finished its chunks and how many it ran,
// and whether it had been asleep (with several workers, the last to
// finish). Steady-clock nanoseconds.
#pragma once

#include <cstddef>
#include <cstdint>

namespace torchlight {
namespace threadpool {
namespace pool_trace {

#if defined(TORCHLIGHT_POOL_TRACE)
inline constexpr bool kEnabled = true;
#else
inline constexpr bool kEnabled = false;
#endif

/// How a parallel_for call ran.
enum class Mode : uint32_t { kInline = 0, kRefused = 1, kPool = 2, kBackedOff = 3 };

/// Starts the record of a parallel_for call of `items` items through `fn`
/// (for the symbol) on this thread; the WorkPool job it runs, if any, adds
/// to it. Records nothing when TORCHLIGHT_POOL_TRACE is unset, the buffer
/// is full, or this thread has a record open.
void begin_call(const void* fn, size_t items);
/// Ends this thread's open record (if any): how the call ran and its chunks.
void end_call(Mode mode, size_t chunks);
/// From WorkPool::run on the calling thread: the caller ran `own` chunks of
/// job `generation` and is about to wait for the rest (generation 0: the
/// pool was backing off after a stall and the caller ran every chunk).
void caller_ran(uint32_t generation, uint32_t own);
/// From a worker: job `generation`, seen at `seen_ns`, its chunks done at
/// `done_ns`, `chunks` of them run there; `slept`: it had been asleep.
void worker_ran(uint32_t generation, int64_t seen_ns, int64_t done_ns, uint32_t chunks, bool slept);
/// Steady-clock nanoseconds.
int64_t now_ns();

}  // namespace pool_trace
}  // namespace threadpool
}  // namespace torchlight
