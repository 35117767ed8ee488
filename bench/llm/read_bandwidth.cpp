// Read bandwidth over an array of a given size: the memory roofline of LLM
// decode, which streams every weight once per token. Each thread sums its
// share of the array with 32-byte loads, over and over; the best pass counts.
//
//   torchlight_read_bandwidth BYTES [THREADS] [PASSES]
//
// prints one JSON line: {"bytes": ..., "threads": ..., "gb_per_s": ...}.
// An array that fits in cache measures cache bandwidth, as decode of a small
// model sees it.
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

namespace {

// Sum of 32-byte lanes, so the loop is load-bound; returned so it is not
// optimised away.
__attribute__((target("avx2"))) float sum_avx2(const float* data, size_t count) {
  __m256 acc[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(),
                   _mm256_setzero_ps()};
  size_t i = 0;
  for (; i + 32 <= count; i += 32) {
    for (int k = 0; k < 4; ++k) acc[k] = _mm256_add_ps(acc[k], _mm256_load_ps(data + i + 8 * k));
  }
  float lanes[8];
  _mm256_storeu_ps(lanes, _mm256_add_ps(_mm256_add_ps(acc[0], acc[1]), _mm256_add_ps(acc[2], acc[3])));
  float total = 0;
  for (float v : lanes) total += v;
  for (; i < count; ++i) total += data[i];
  return total;
}

float sum_plain(const float* data, size_t count) {
  float total = 0;
  for (size_t i = 0; i < count; ++i) total += data[i];
  return total;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s BYTES [THREADS] [PASSES]\n", argv[0]);
    return 2;
  }
  const size_t bytes = std::max<size_t>(std::strtoull(argv[1], nullptr, 10), 4096);
  const int threads = argc > 2 ? std::max(1, std::atoi(argv[2])) : 1;
  const int passes = argc > 3 ? std::max(1, std::atoi(argv[3])) : 20;
  const size_t count = (bytes / sizeof(float) + 255) / 256 * 256;  // whole 1 KiB blocks
  float* data = static_cast<float*>(std::aligned_alloc(64, count * sizeof(float)));
  if (data == nullptr) {
    std::fprintf(stderr, "cannot allocate %zu bytes\n", count * sizeof(float));
    return 1;
  }
  for (size_t i = 0; i < count; ++i) data[i] = static_cast<float>(i & 7);
  const bool avx2 = __builtin_cpu_supports("avx2");

  // Threads split the array in contiguous shares, as the GEMV kernels do.
  const size_t share = (count / threads + 255) / 256 * 256;
  std::vector<float> sink(threads);
  double best = 1e30;
  for (int pass = 0; pass < passes; ++pass) {
    const auto start = std::chrono::steady_clock::now();
    std::vector<std::thread> workers;
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([&, t] {
        const size_t begin = std::min(count, t * share);
        const size_t n = std::min(count, begin + share) - begin;
        sink[t] += avx2 ? sum_avx2(data + begin, n) : sum_plain(data + begin, n);
      });
    }
    for (std::thread& w : workers) w.join();
    const double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    best = std::min(best, seconds);
  }
  float checksum = 0;
  for (float v : sink) checksum += v;
  std::printf("{\"bytes\": %zu, \"threads\": %d, \"gb_per_s\": %.3f, \"checksum\": %g}\n",
              count * sizeof(float), threads, count * sizeof(float) / best / 1e9, checksum);
  std::free(data);
  return 0;
}
