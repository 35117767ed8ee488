#include "extension/threadpool/threadpool.h"

#include <pthreadpool.h>
#include <unistd.h>

#include <algorithm>
#include <memory>
#include <mutex>

#include "extension/threadpool/pool_trace.h"
#include "extension/threadpool/work_pool.h"

namespace torchlight {
namespace threadpool {
namespace {

// parallel_for runs on our WorkPool; XNNPACK takes a pthreadpool_t, made
// on first request with the same thread count.
struct Pool {
  std::unique_ptr<WorkPool> work;  // null with one thread
  pthreadpool_t native = nullptr;
  bool native_made = false;
  size_t threads = 1;
};

size_t online_cores() {
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n > 0 ? static_cast<size_t>(n) : 1;
}

Pool& pool() {
  static Pool* instance = [] {
    Pool* p = new Pool();
    p->threads = online_cores();
    if (p->threads > 1) p->work = std::make_unique<WorkPool>(p->threads);
    return p;
  }();
  return *instance;
}

// parallel_for's chunks per thread for jobs of at least kManyItemsPerThread
// items a thread (else 4).
constexpr size_t kManyItemsPerThread = 256;
constexpr size_t kChunksPerThreadOfMany = 16;

// Set while a thread runs a chunk, so nested parallel_for calls run inline
// instead of deadlocking on the (non-reentrant) pool.
thread_local bool in_parallel_region = false;

// Set by NativePoolScope: this thread's parallel_for goes to that pthreadpool.
thread_local pthreadpool_t routed_pool = nullptr;

struct Job {
  RangeFn fn;
  void* context;
  size_t n;
  size_t chunk;
};

void run_chunk(void* arg, size_t index) {  // WorkPool::ChunkFn
  const Job& job = *static_cast<const Job*>(arg);
  size_t begin = index * job.chunk;
  size_t end = std::min(job.n, begin + job.chunk);
  bool was_inside = in_parallel_region;
  in_parallel_region = true;
  job.fn(job.context, begin, end);
  in_parallel_region = was_inside;
}

}  // namespace

size_t num_threads() { return pool().threads; }

pthreadpool* native_pool() {
  Pool& p = pool();
  static std::mutex creating;  // delegates may initialise on several threads
  std::lock_guard<std::mutex> lock(creating);
  if (!p.native_made && p.threads > 1) p.native = pthreadpool_create(p.threads);
  p.native_made = true;
  return p.native;
}

void yield_to_native_pool() {
  Pool& p = pool();
  if (p.work != nullptr) p.work->park();
}

void park_native_pool() {
  Pool& p = pool();
  if (p.native == nullptr) return;
  // An empty job whose flag sends every worker to a kernel wait when done.
  pthreadpool_parallelize_1d(
      p.native, [](void*, size_t) {}, nullptr, pthreadpool_get_threads_count(p.native),
      PTHREADPOOL_FLAG_YIELD_WORKERS);
}

void set_num_threads(size_t n) {
  Pool& p = pool();
  if (n == 0) n = online_cores();
  if (n == p.threads) return;
  p.work.reset();
  if (p.native != nullptr) pthreadpool_destroy(p.native);
  p.native = nullptr;
  p.native_made = false;
  p.threads = n;
  if (n > 1) p.work = std::make_unique<WorkPool>(n);
}

NativePoolScope::NativePoolScope(pthreadpool* pool) : previous_(routed_pool) {
  if (pool != nullptr) routed_pool = pool;
}

NativePoolScope::~NativePoolScope() { routed_pool = previous_; }

bool workers_ready() {
  Pool& p = pool();
  return p.work != nullptr && !in_parallel_region && p.work->ready();
}

uint64_t stalls() {
  Pool& p = pool();
  return p.work != nullptr ? p.work->stalls() : 0;
}

void parallel_for(size_t n, size_t min_chunk, RangeFn fn, void* context) {
  if (n == 0) return;
  Pool& p = pool();
  min_chunk = std::max<size_t>(min_chunk, 1);
  const bool routed = routed_pool != nullptr;
  if constexpr (pool_trace::kEnabled) {
    if (!in_parallel_region) pool_trace::begin_call(reinterpret_cast<const void*>(fn), n);
  }
  if ((p.work == nullptr && !routed) || in_parallel_region || n <= min_chunk) {
    fn(context, 0, n);
    if constexpr (pool_trace::kEnabled) pool_trace::end_call(pool_trace::Mode::kInline, 1);
    return;
  }
  const size_t threads = routed ? pthreadpool_get_threads_count(routed_pool) : p.threads;
  // A few chunks per thread balance uneven chunks without much overhead.
  // Jobs of many items get more: when one core runs slower (another process
  // on it, or this VM's slow phases), the other takes more of the job by
  // stealing; a stories15m classifier (2000 blocks of 16 columns) in
  // chunks of ~45 us left a 2-thread decode step waiting 40-75 us for the
  // slower thread's last chunk in such phases (session 19).
  const size_t per_thread = n >= threads * kManyItemsPerThread ? kChunksPerThreadOfMany : 4;
  size_t chunk = std::max(min_chunk, (n + threads * per_thread - 1) / (threads * per_thread));
  Job job{fn, context, n, chunk};
  size_t chunks = (n + chunk - 1) / chunk;
  if (routed) {
    // The calling thread runs chunks too, as on the WorkPool.
    pthreadpool_parallelize_1d(routed_pool, run_chunk, &job, chunks, 0);
    if constexpr (pool_trace::kEnabled) pool_trace::end_call(pool_trace::Mode::kPool, chunks);
    return;
  }
  // Busy with another caller's job: run this one here rather than wait.
  if (p.work->run(chunks, run_chunk, &job)) {
    if constexpr (pool_trace::kEnabled) pool_trace::end_call(pool_trace::Mode::kPool, chunks);
    return;
  }
  fn(context, 0, n);
  if constexpr (pool_trace::kEnabled) pool_trace::end_call(pool_trace::Mode::kRefused, 1);
}

}  // namespace threadpool
}  // namespace torchlight
