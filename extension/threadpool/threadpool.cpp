#include "extension/threadpool/threadpool.h"

#include <pthreadpool.h>
#include <unistd.h>

#include <algorithm>
#include <mutex>

namespace torchlight {
namespace threadpool {
namespace {

struct Pool {
  pthreadpool_t pool = nullptr;
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
    if (p->threads > 1) p->pool = pthreadpool_create(p->threads);
    if (p->pool == nullptr) p->threads = 1;
    return p;
  }();
  return *instance;
}

// Set while a thread runs a chunk, so nested parallel_for calls run inline
// instead of deadlocking on the (non-reentrant) pool.
thread_local bool in_parallel_region = false;

struct Job {
  RangeFn fn;
  void* context;
  size_t n;
  size_t chunk;
};

void run_chunk(void* arg, size_t index) {
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

pthreadpool* native_pool() { return pool().pool; }

void set_num_threads(size_t n) {
  Pool& p = pool();
  if (n == 0) n = online_cores();
  if (n == p.threads) return;
  if (p.pool != nullptr) pthreadpool_destroy(p.pool);
  p.pool = n > 1 ? pthreadpool_create(n) : nullptr;
  p.threads = p.pool != nullptr ? n : 1;
}

void parallel_for(size_t n, size_t min_chunk, RangeFn fn, void* context) {
  if (n == 0) return;
  Pool& p = pool();
  min_chunk = std::max<size_t>(min_chunk, 1);
  if (p.pool == nullptr || in_parallel_region || n <= min_chunk) {
    fn(context, 0, n);
    return;
  }
  // A few chunks per thread balance uneven chunks without much overhead.
  size_t chunk = std::max(min_chunk, (n + p.threads * 4 - 1) / (p.threads * 4));
  Job job{fn, context, n, chunk};
  size_t chunks = (n + chunk - 1) / chunk;
  pthreadpool_parallelize_1d(p.pool, run_chunk, &job, chunks, 0);
}

}  // namespace threadpool
}  // namespace torchlight
