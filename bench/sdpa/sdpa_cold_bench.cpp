// torchlight::rope_sdpa_with_kv_cache.out, the call a Llama layer makes per
// decode token, at stories110M's shape (12 heads, D = 64, a 1024-position
// cache, B = 1, T = 1), warm and cold:
//   - warm: the same call repeated, so K and V stay in the CPU caches (L2
//     up to ~160 positions with float16 caches);
//   - cold: a 32 MiB buffer read before every call, as the layer's weights
//     stream between two attention calls in a model (read only, like them:
//     no dirty lines to write back), so K and V come from memory. Only the
//     call is timed.
// Per call: the minimum and median of the calling thread's CPU time and of
// wall time over --calls calls (CPU time is what one thread spends; at 2
// threads compare wall times).
//
//   build/release/bench/sdpa/torchlight_sdpa_cold_bench [--calls N]
//       [--positions 128,160,256,512] [--threads 1,2] [--caches f16,f32]
#include <time.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

#include "bench/sdpa/random_values.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::llm {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using bench::random_values;

constexpr int kHeads = 12;
constexpr int kHeadDim = 64;
constexpr int kCacheLen = 1024;
constexpr size_t kEvictBytes = size_t{32} << 20;  // 4x the 8 MiB L3.

double seconds(clockid_t clock) {
  timespec t{};
  clock_gettime(clock, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// One decode call's tensors: query/key/value [1, 1, 12, 64], full random
// caches [1, 12, 1024, 64] of `cache_dtype`, input_pos = {position}.
struct DecodeCall {
  DecodeCall(ScalarType cache_dtype, int position)
      : query(ScalarType::kFloat, {1, 1, kHeads, kHeadDim}, random_values(kHeads * kHeadDim, 1)),
        key(ScalarType::kFloat, {1, 1, kHeads, kHeadDim}, random_values(kHeads * kHeadDim, 2)),
        value(ScalarType::kFloat, {1, 1, kHeads, kHeadDim}, random_values(kHeads * kHeadDim, 3)),
        key_cache(cache_dtype, {1, kHeads, kCacheLen, kHeadDim},
                  random_values(size_t{kHeads} * kCacheLen * kHeadDim, 4)),
        value_cache(cache_dtype, {1, kHeads, kCacheLen, kHeadDim},
                    random_values(size_t{kHeads} * kCacheLen * kHeadDim, 5)),
        input_pos(ScalarType::kLong, {1}, {static_cast<double>(position)}),
        cos(ScalarType::kFloat, {1, kHeadDim / 2}, random_values(kHeadDim / 2, 6)),
        sin(ScalarType::kFloat, {1, kHeadDim / 2}, random_values(kHeadDim / 2, 7)),
        out(ScalarType::kFloat, {1, 1, kHeads, kHeadDim}),
        scratch(2 * kHeads * kHeadDim) {}

  // Returns false (after printing the error) when the call fails.
  bool run() {
    KernelArgs args{query.evalue(),     key.evalue(),       value.evalue(), key_cache.evalue(),
                    value_cache.evalue(), input_pos.evalue(), cos.evalue(),   sin.evalue(),
                    EValue(),           out.evalue(),       EValue()};
    KernelContext ctx(nullptr, nullptr, "torchlight::rope_sdpa_with_kv_cache.out");
    ctx.set_scratch(scratch.data(), scratch.size() * sizeof(float));
    rope_sdpa_with_kv_cache_out(ctx, args.span());
    if (ctx.failed()) std::fprintf(stderr, "call failed: %s\n", ctx.status().message());
    return !ctx.failed();
  }

  TestTensor query, key, value, key_cache, value_cache, input_pos, cos, sin, out;
  std::vector<float> scratch;  // The rotated query and key.
};

// Reads every line of `buffer`, pushing everything else out of L1, L2
// and L3.
uint64_t evict(const std::vector<uint64_t>& buffer) {
  uint64_t sum = 0;
  for (size_t i = 0; i < buffer.size(); i += 8) sum += buffer[i];
  return sum;
}

struct Stats {
  double cpu_min, cpu_median, wall_min, wall_median;  // Microseconds per call.
};

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool measure(DecodeCall& call, int calls, bool cold, const std::vector<uint64_t>& buffer,
             Stats* stats) {
  std::vector<double> cpu, wall;
  uint64_t sink = 0;
  for (int i = 0; i < calls + 3; ++i) {  // 3 calls of warm-up.
    if (cold) sink += evict(buffer);
    const double c0 = seconds(CLOCK_THREAD_CPUTIME_ID);
    const double w0 = seconds(CLOCK_MONOTONIC);
    if (!call.run()) return false;
    const double w1 = seconds(CLOCK_MONOTONIC);
    const double c1 = seconds(CLOCK_THREAD_CPUTIME_ID);
    if (i < 3) continue;
    cpu.push_back(1e6 * (c1 - c0));
    wall.push_back(1e6 * (w1 - w0));
  }
  if (sink == 42) std::printf(" ");  // Keeps the eviction.
  *stats = Stats{*std::min_element(cpu.begin(), cpu.end()), median(cpu),
                 *std::min_element(wall.begin(), wall.end()), median(wall)};
  return true;
}

std::vector<int> int_list(const char* text) {
  std::vector<int> out;
  for (const char* p = text; *p != '\0';) {
    out.push_back(std::atoi(p));
    const char* comma = std::strchr(p, ',');
    if (comma == nullptr) break;
    p = comma + 1;
  }
  return out;
}

}  // namespace
}  // namespace torchlight::llm

int main(int argc, char** argv) {
  using namespace torchlight::llm;
  using torchlight::ScalarType;
  int calls = 200;
  std::vector<int> positions = {128, 160, 256, 512};
  std::vector<int> threads = {1, 2};
  std::string caches = "f16,f32";
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string flag = argv[i];
    if (flag == "--calls") {
      calls = std::atoi(argv[i + 1]);
    } else if (flag == "--positions") {
      positions = int_list(argv[i + 1]);
    } else if (flag == "--threads") {
      threads = int_list(argv[i + 1]);
    } else if (flag == "--caches") {
      caches = argv[i + 1];
    } else {
      std::fprintf(stderr, "unknown flag %s (see the header of sdpa_cold_bench.cpp)\n",
                   argv[i]);
      return 1;
    }
  }
  if (argc % 2 == 0 || calls < 1) {
    std::fprintf(stderr, "usage: %s [--calls N>0] [--positions L,...] [--threads T,...] "
                 "[--caches f16,f32]\n", argv[0]);
    return 1;
  }
  std::vector<uint64_t> buffer(kEvictBytes / sizeof(uint64_t));
  for (size_t i = 0; i < buffer.size(); ++i) buffer[i] = i;
  std::printf("rope_sdpa_with_kv_cache decode, 12 heads x D 64, microseconds per call "
              "(%d calls; min / median)\n", calls);
  std::printf("%-5s %3s %5s | %8s %8s %8s %8s | %8s %8s %8s %8s\n", "cache", "thr", "pos",
              "warm cpu", "med", "wall", "med", "cold cpu", "med", "wall", "med");
  for (const char* cache : {"f16", "f32"}) {
    if (caches.find(cache) == std::string::npos) continue;
    const ScalarType dtype = std::strcmp(cache, "f16") == 0 ? ScalarType::kHalf
                                                            : ScalarType::kFloat;
    for (int t : threads) {
      torchlight::threadpool::set_num_threads(static_cast<size_t>(t));
      for (int pos : positions) {
        if (pos < 0 || pos >= kCacheLen) {
          std::fprintf(stderr, "position %d is outside [0, %d)\n", pos, kCacheLen);
          return 1;
        }
        DecodeCall call(dtype, pos);
        Stats warm{}, cold{};
        if (!measure(call, calls, false, buffer, &warm)) return 1;
        if (!measure(call, calls, true, buffer, &cold)) return 1;
        std::printf("%-5s %3d %5d | %8.1f %8.1f %8.1f %8.1f | %8.1f %8.1f %8.1f %8.1f\n", cache,
                    t, pos, warm.cpu_min, warm.cpu_median, warm.wall_min, warm.wall_median,
                    cold.cpu_min, cold.cpu_median, cold.wall_min, cold.wall_median);
      }
    }
  }
  return 0;
}
