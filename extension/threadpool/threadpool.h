// A process-wide worker pool for kernels that split work across cores.
//
// Kernels see one small API and the core runtime stays free of threads.
// parallel_for runs on WorkPool (work_pool.h: the caller never waits for a
// worker that has not started, which matters on a loaded machine); XNNPACK
// gets a pthreadpool of the same size (native_pool), which parallel_for
// runs on instead inside a NativePoolScope. The pool is created on
// first use with one thread per online core; set_num_threads() resizes it.
// parallel_for blocks until every chunk has run, and runs inline when the
// pool has one thread, the range is a single chunk, or another thread's job
// holds the pool, so callers need no special case for small problems.
#pragma once

#include <cstddef>
#include <cstdint>

struct pthreadpool;  // pthreadpool.h's pool type, so callers need not include it.

namespace torchlight {
namespace threadpool {

/// Threads the pool uses (>= 1).
size_t num_threads();

/// Rebuilds the pool with `n` threads (0 means one per online core). Not
/// safe to call while another thread is inside parallel_for.
void set_num_threads(size_t n);

/// A chunk of work: runs items [begin, end).
using RangeFn = void (*)(void* context, size_t begin, size_t end);

/// The underlying pool, for libraries that take a pthreadpool_t (XNNPACK),
/// or null when the pool runs everything inline (one thread). Valid until
/// the next set_num_threads().
pthreadpool* native_pool();

/// Call before running work on native_pool(): parallel_for's idle workers
/// stop spinning and sleep until the next parallel_for, so they do not hold
/// the cores native_pool()'s workers need (it waits for all of them).
void yield_to_native_pool();

/// The other direction, before parallel_for work that follows work on
/// native_pool(): its workers stop spinning for the next job and sleep, so
/// they do not hold the cores parallel_for's workers need.
void park_native_pool();

/// While alive, parallel_for calls made on the constructing thread run their
/// chunks on `pool` (pthreadpool_parallelize_1d) instead of the WorkPool.
/// For kernels that run between XNNPACK operators (the XNNPACK delegate's
/// conv2d stages): one set of threads then serves both, with no hand-over
/// between two pools whose workers each spin after a job. A null `pool`
/// changes nothing; scopes nest (the innermost wins). Chunks are the same
/// as on the WorkPool; nested calls from inside a chunk still run inline.
class NativePoolScope {
 public:
  explicit NativePoolScope(pthreadpool* pool);
  ~NativePoolScope();
  NativePoolScope(const NativePoolScope&) = delete;
  NativePoolScope& operator=(const NativePoolScope&) = delete;

 private:
  pthreadpool* previous_;
};

/// Whether a parallel_for now would start on every thread at once: the
/// pool has workers, all awake (spinning after a recent job, none asleep),
/// not backing off after a stall (work_pool.h), and the caller is not
/// inside a chunk. Jobs of a few microseconds are worth splitting only
/// then; it changes with the load, so it is a hint for speed only.
bool workers_ready();

/// Stalls the pool has seen since it was made (each started a back-off in
/// which parallel_for runs on the caller alone; work_pool.h), for benchmarks.
uint64_t stalls();

/// Calls fn(context, begin, end) over [0, n) in chunks of at least
/// `min_chunk` items, spread over the pool's threads; returns when all are
/// done. Nested calls from inside a chunk run inline.
void parallel_for(size_t n, size_t min_chunk, RangeFn fn, void* context);

/// The same, for a callable `f(begin, end)`.
template <typename F>
void parallel_for(size_t n, size_t min_chunk, const F& f) {
  parallel_for(
      n, min_chunk,
      [](void* ctx, size_t begin, size_t end) { (*static_cast<const F*>(ctx))(begin, end); },
      const_cast<F*>(&f));
}

}  // namespace threadpool
}  // namespace torchlight
