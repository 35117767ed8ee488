// Per-call latency of a small parallel job (the size of one decode-step
// GEMV slice) on pthreadpool and on our WorkPool, side by side, on an idle
// machine and with background threads keeping every core busy (as other
// processes do on a loaded machine). Prints median / p99 / mean in us and
// WorkPool's ratio to pthreadpool.
//
//   ./torchlight exec build/release/bench/threadpool/torchlight_parallel_for_latency [calls]
#include <pthreadpool.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "extension/threadpool/work_pool.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kChunks = 8;
constexpr size_t kChunkFloats = 2048;  // ~0.5 us of adds per chunk

struct Work {
  std::vector<float> data = std::vector<float>(kChunks * kChunkFloats, 1.0f);
  std::vector<float> sums = std::vector<float>(kChunks);
  static void chunk(void* self, size_t index) {
    auto* w = static_cast<Work*>(self);
    float s = 0;
    const float* p = w->data.data() + index * kChunkFloats;
    for (size_t i = 0; i < kChunkFloats; ++i) s += p[i];
    w->sums[index] = s;
  }
};

struct Stats {
  double median, p99, mean;
};

Stats summarize(std::vector<double> us) {
  std::sort(us.begin(), us.end());
  double total = 0;
  for (double v : us) total += v;
  return {us[us.size() / 2], us[us.size() * 99 / 100], total / us.size()};
}

template <typename Run>
std::vector<double> time_calls(size_t calls, Run run) {
  std::vector<double> us;
  us.reserve(calls);
  for (size_t i = 0; i < calls; ++i) {
    const auto start = Clock::now();
    run();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - start).count());
  }
  return us;
}

}  // namespace

int main(int argc, char** argv) {
  const size_t calls = argc > 1 ? std::strtoul(argv[1], nullptr, 10) : 20000;
  const size_t threads = 2;
  Work work;
  pthreadpool_t pthreads = pthreadpool_create(threads);
  torchlight::threadpool::WorkPool pool(threads);
  std::printf("%zu calls of %zu chunks on %zu threads; latency per call in us\n", calls, kChunks,
              threads);
  std::printf("%-22s %-11s %8s %8s %8s\n", "machine", "pool", "median", "p99", "mean");
  for (int loaded = 0; loaded < 2; ++loaded) {
    std::atomic<bool> stop{false};
    std::vector<std::thread> hogs;
    if (loaded) {
      const unsigned cores = std::max(1u, std::thread::hardware_concurrency());
      for (unsigned i = 0; i < cores; ++i) {
        hogs.emplace_back([&] {
          volatile unsigned long x = 0;
          while (!stop.load(std::memory_order_relaxed)) x = x + 1;
        });
      }
    }
    // Interleaved halves, so drifting load affects both pools alike.
    std::vector<double> theirs, ours;
    for (int half = 0; half < 2; ++half) {
      auto a = time_calls(calls / 2, [&] {
        pthreadpool_parallelize_1d(pthreads, [](void* w, size_t i) { Work::chunk(w, i); }, &work,
                                   kChunks, 0);
      });
      auto b = time_calls(calls / 2, [&] { pool.run(kChunks, &Work::chunk, &work); });
      theirs.insert(theirs.end(), a.begin(), a.end());
      ours.insert(ours.end(), b.begin(), b.end());
    }
    stop = true;
    for (std::thread& t : hogs) t.join();
    const char* machine = loaded ? "all cores busy" : "idle";
    const Stats t = summarize(theirs), o = summarize(ours);
    std::printf("%-22s %-11s %8.1f %8.1f %8.1f\n", machine, "pthreadpool", t.median, t.p99, t.mean);
    std::printf("%-22s %-11s %8.1f %8.1f %8.1f\n", machine, "WorkPool", o.median, o.p99, o.mean);
    std::printf("%-22s %-11s %7.2fx %7.2fx %7.2fx\n", machine, "ratio", o.median / t.median,
                o.p99 / t.p99, o.mean / t.mean);
  }
  pthreadpool_destroy(pthreads);
  return 0;
}
