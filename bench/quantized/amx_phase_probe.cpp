// How fast each core's AMX unit multiplies, over time: a loop of tile
// multiplies (1500 tdpbssd a block, operands in L1) on every core at once,
// each pinned to its CPU, printing per core the median thread CPU time of
// each 100 blocks. On this project's VM one core's multiplies were seen
// 3-5x slower than the other's for 0.1-2 s at a time (bench/README.md,
// session 18), which decides AMX prefill figures more than the code does:
// run it beside a benchmark to know which phase the benchmark met.
//
//   ./torchlight exec build/release/bench/quantized/torchlight_amx_phase_probe [buckets] [cpus]
//
// Linux x86-64 with AMX only (says so and exits otherwise).
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstdint>
#include <thread>
#include <vector>

#include "kernels/quantized/amx_tile_config.h"
#include "kernels/quantized/quant_isa.h"

#if defined(__x86_64__)
#include <immintrin.h>

namespace {

constexpr int kMultipliesPerStep = 3;
constexpr int kStepsPerBlock = 500;
constexpr int kBlocksPerBucket = 100;

double thread_cpu_us() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec) * 1e-3;
}

// The int8 prefill's step shape: three A tiles against one B tile into three
// C tiles, random bytes.
__attribute__((target("amx-tile,amx-int8"))) void multiply_block(const int8_t* a, const int8_t* b, int32_t* c) {
  for (int i = 0; i < kStepsPerBlock; ++i) {
    _tile_loadd(3, a, 64);
    _tile_loadd(4, a + 1024, 64);
    _tile_loadd(5, a + 2048, 64);
    _tile_loadd(6, b, 64);
    _tile_dpbssd(0, 3, 6);
    _tile_dpbssd(1, 4, 6);
    _tile_dpbssd(2, 5, 6);
  }
  _tile_stored(0, c, 64);
}

__attribute__((target("amx-tile"))) void configure() {
  torchlight::quantized::AmxTileConfig config;
  for (int t = 0; t < 8; ++t) config.set(t, 16, 64);
  _tile_loadconfig(&config);
}

__attribute__((target("amx-tile"))) void release() { _tile_release(); }

// Median CPU us of each bucket of blocks on `cpu`.
std::vector<double> probe(int cpu, int buckets) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof(set), &set);
  alignas(64) int8_t a[3 * 1024], b[1024];
  alignas(64) int32_t c[256];
  uint32_t seed = 1u + static_cast<uint32_t>(cpu);
  for (int8_t& v : a) v = static_cast<int8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
  for (int8_t& v : b) v = static_cast<int8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
  configure();
  std::vector<double> medians;
  std::vector<double> times(kBlocksPerBucket);
  for (int bucket = 0; bucket < buckets; ++bucket) {
    for (double& t : times) {
      const double start = thread_cpu_us();
      multiply_block(a, b, c);
      t = thread_cpu_us() - start;
    }
    std::nth_element(times.begin(), times.begin() + kBlocksPerBucket / 2, times.end());
    medians.push_back(times[kBlocksPerBucket / 2]);
  }
  release();
  return medians;
}

}  // namespace

int main(int argc, char** argv) {
  const int buckets = argc > 1 ? std::max(1, std::atoi(argv[1])) : 40;
  const int cpus = argc > 2 ? std::max(1, std::atoi(argv[2])) : static_cast<int>(std::thread::hardware_concurrency());
  if (!torchlight::quantized::cpu_has_quant_isa(torchlight::quantized::QuantIsa::kAmx)) {
    std::printf("no AMX-INT8 on this CPU (or the kernel does not grant it)\n");
    return 0;
  }
  std::vector<std::vector<double>> results(static_cast<size_t>(cpus));
  std::vector<std::thread> threads;
  for (int cpu = 0; cpu < cpus; ++cpu) {
    threads.emplace_back([&results, cpu, buckets] { results[static_cast<size_t>(cpu)] = probe(cpu, buckets); });
  }
  for (std::thread& t : threads) t.join();
  std::printf("median CPU us per %d tdpbssd (operands in L1), per %d blocks; ~%.1f is ~6 ns a multiply\n",
              kStepsPerBlock * kMultipliesPerStep, kBlocksPerBucket, kStepsPerBlock * kMultipliesPerStep * 6e-3);
  for (int cpu = 0; cpu < cpus; ++cpu) {
    std::printf("cpu %d:", cpu);
    for (const double m : results[static_cast<size_t>(cpu)]) std::printf(" %.0f", m);
    std::printf("\n");
  }
  return 0;
}
#else
int main() {
  std::printf("AMX is x86-64 only\n");
  return 0;
}
#endif
