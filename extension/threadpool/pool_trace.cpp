#include "extension/threadpool/pool_trace.h"

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#if defined(__linux__)
#include <dlfcn.h>
#endif

namespace torchlight {
namespace threadpool {
namespace pool_trace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

#if defined(TORCHLIGHT_POOL_TRACE)
namespace {

struct Call {
  int64_t start, own_done, end;
  uintptr_t fn;
  uint64_t items, chunks;
  uint32_t own, mode, generation;
};
struct Job {
  int64_t seen, done;
  uint32_t generation, chunks, slept;
};

constexpr size_t kMaxCalls = size_t{1} << 20;
constexpr size_t kMaxJobs = size_t{1} << 20;

// Filled by one calling thread at a time (the pool runs one job at a time;
// inline calls from other threads are not recorded), and by the worker of
// a job while its caller waits; written out once, at exit.
struct Buffers {
  Call* calls = new Call[kMaxCalls];
  Job* jobs = new Job[kMaxJobs];
  size_t call_count = 0;
  std::mutex mutex;  // guards call_count and open
  const char* path = std::getenv("TORCHLIGHT_POOL_TRACE");
};

Buffers& buffers() {
  static Buffers* b = [] {
    auto* made = new Buffers();
    if (made->path != nullptr) std::atexit([] {
      Buffers& out = buffers();
      FILE* f = std::fopen(out.path, "w");
      if (f == nullptr) return;
      uintptr_t base = 0;
#if defined(__linux__)
      Dl_info info{};
      if (dladdr(reinterpret_cast<void*>(&now_ns), &info) != 0) base = reinterpret_cast<uintptr_t>(info.dli_fbase);
#endif
      std::fprintf(f, "base %llx\n", static_cast<unsigned long long>(base));
      for (size_t i = 0; i < out.call_count; ++i) {
        const Call& c = out.calls[i];
        std::fprintf(f, "call %lld %lld %lld %llx %llu %llu %u %u %u\n", static_cast<long long>(c.start),
                     static_cast<long long>(c.own_done), static_cast<long long>(c.end),
                     static_cast<unsigned long long>(c.fn - base), static_cast<unsigned long long>(c.items),
                     static_cast<unsigned long long>(c.chunks), c.own, c.mode, c.generation);
      }
      for (size_t g = 0; g < kMaxJobs; ++g) {
        const Job& j = out.jobs[g];
        if (j.generation == 0 || j.generation % kMaxJobs != g) continue;
        std::fprintf(f, "job %u %lld %lld %u %u\n", j.generation, static_cast<long long>(j.seen),
                     static_cast<long long>(j.done), j.chunks, j.slept);
      }
      std::fclose(f);
    });
    return made;
  }();
  return *b;
}

thread_local Call* open_call = nullptr;

}  // namespace

void begin_call(const void* fn, size_t items) {
  Buffers& b = buffers();
  if (b.path == nullptr || open_call != nullptr) return;
  std::lock_guard<std::mutex> lock(b.mutex);
  if (b.call_count == kMaxCalls) return;
  Call* c = &b.calls[b.call_count++];
  *c = Call{};
  c->fn = reinterpret_cast<uintptr_t>(fn);
  c->items = items;
  c->start = now_ns();
  open_call = c;
}

void end_call(Mode mode, size_t chunks) {
  Call* c = open_call;
  if (c == nullptr) return;
  c->end = now_ns();
  c->mode = static_cast<uint32_t>(mode);
  c->chunks = chunks;
  open_call = nullptr;
}

void caller_ran(uint32_t generation, uint32_t own) {
  Call* c = open_call;
  if (c == nullptr) return;
  c->own_done = now_ns();
  c->own = own;
  c->generation = generation;
}

void worker_ran(uint32_t generation, int64_t seen_ns, int64_t done_ns, uint32_t chunks, bool slept) {
  Buffers& b = buffers();
  if (b.path == nullptr) return;
  b.jobs[generation % kMaxJobs] = Job{seen_ns, done_ns, generation, chunks, slept ? 1u : 0u};
}

#else

void begin_call(const void*, size_t) {}
void end_call(Mode, size_t) {}
void caller_ran(uint32_t, uint32_t) {}
void worker_ran(uint32_t, int64_t, int64_t, uint32_t, bool) {}

#endif

}  // namespace pool_trace
}  // namespace threadpool
}  // namespace torchlight
