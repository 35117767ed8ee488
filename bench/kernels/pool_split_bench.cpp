// The optimized library's element-wise split (kernels/optimized/pool_split.h)
// against the serial loop, for kMinSplitBytes: an add of two float arrays
// into a third (the fast path's loop) at sizes from 8 KB to an LLM
// prefill's 393 KB of out, on the calling thread and through
// PoolSplitOf<min bytes> at 2 threads. Wall time (the caller waits for the
// chunks); run on an otherwise idle machine.
//
//   ./torchlight exec build/release/bench/kernels/torchlight_pool_split_bench
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/pool_split.h"

namespace torchlight::optimized {
namespace {

void add_loop(const float* a, const float* b, float* z, int64_t begin, int64_t end) {
  for (int64_t i = begin; i < end; ++i) z[i] = a[i] + b[i];
}

// Arg 0: bytes of out. Split: PoolSplitOf<kMinBytes> over a 2-thread
// pool (loops under 2 x kMinBytes stay serial); 0: the serial loop.
template <int64_t kMinBytes>
void BM_add(benchmark::State& state) {
  const int64_t n = state.range(0) / 4;
  threadpool::set_num_threads(kMinBytes == 0 ? 1 : 2);
  std::vector<float> a(static_cast<size_t>(n), 1.5f), b(static_cast<size_t>(n), 2.5f),
      z(static_cast<size_t>(n));
  auto loop = [&](int64_t begin, int64_t end) { add_loop(a.data(), b.data(), z.data(), begin, end); };
  for (auto _ : state) {
    if constexpr (kMinBytes == 0) {
      loop(0, n);
    } else {
      PoolSplitOf<kMinBytes>::run(n, 4, loop);
    }
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * n * 12);
}

void sizes(benchmark::internal::Benchmark* b) {
  b->ArgNames({"bytes"})
      ->ArgsProduct({{8192, 32768, 65536, 147456, 393216, 1048576, 4194304}})
      ->UseRealTime()
      ->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_add<0>)->Apply(sizes);
BENCHMARK(BM_add<4096>)->Apply(sizes);
BENCHMARK(BM_add<16384>)->Apply(sizes);
BENCHMARK(BM_add<kMinSplitBytes>)->Apply(sizes);

}  // namespace
}  // namespace torchlight::optimized

BENCHMARK_MAIN();
