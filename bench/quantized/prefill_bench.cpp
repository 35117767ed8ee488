// Quantized prefill at stories15m's shapes, as the model runs it: where a
// linear call's time goes beyond its multiplies (kernels/quantized/README.md,
// bench/README.md "session 17").
//
// - BM_prefill_layers: a stories15m layer's seven linears (wq, wk, wv, wo:
//   288 x 288; w1, w3: 288 x 768; w2: 768 x 288) on 128 rows, each with its
//   own weights, for 1 or 6 layers in a row (6: the model's 42, whose int8
//   weights, 6 MB, no longer stay in L2 between runs); `repeat` 7 runs
//   each call seven times before the next (each call's weights and scratch
//   then warm): time per iteration, `calls` calls in it.
// - BM_prefill_gap: one 288 x 288 call after `gap` us of scalar work on the
//   calling thread, the call alone timed: whether the tile unit is slow to
//   start after other work (as the model interleaves norms and attention).
// - BM_pool_round_trip: an empty parallel_for of two chunks (what each
//   extra split of a call costs).
// - BM_amx_tile_config: a tile configuration load and release, the pair
//   every call of the AMX kernels paid per thread (AMX only).
//
//   ./torchlight exec build/release/bench/quantized/torchlight_quantized_prefill_bench
//       --benchmark_repetitions=5
//
// quant: 0 int8 (linear_int8), 1 8da4w (linear_8da4w, group 32, constant
// weights); both on AMX tiles where quant_isa() says so.
#include <benchmark/benchmark.h>

#include <time.h>

#include <cstdint>
#include <memory>
#include <vector>

#include "bench/quantized/prepared_kernel.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/quant_isa.h"

#if defined(__x86_64__)
#include <immintrin.h>

#include "kernels/quantized/amx_tile_config.h"
#endif

namespace torchlight {
namespace {

using bench::PreparedKernel;
using bench::random_ints;
using bench::random_values;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;

constexpr int kRows = 128;
constexpr int kGroup = 32;

// One linear of the model: its weights, output and prepared call; x is shared.
class Linear {
 public:
  Linear(int quant, TestTensor& x, int k, int n, uint64_t seed)
      : w_(quant == 0 ? ScalarType::kChar : ScalarType::kByte, {n, quant == 0 ? k : k / 2},
           quant == 0 ? random_ints(n * k, seed, -127, 128) : random_ints(n * k / 2, seed, 0, 256)),
        s_(ScalarType::kFloat, quant == 0 ? std::vector<SizesType>{n} : std::vector<SizesType>{n, k / kGroup},
           random_values(quant == 0 ? n : n * k / kGroup, seed + 1, 0.001, 0.01)),
        out_(ScalarType::kFloat, {kRows, n}),
        args_(quant == 0 ? std::vector<EValue>{x.evalue(), w_.evalue(), s_.evalue(), EValue(),
                                               out_.evalue(), EValue()}
                         : std::vector<EValue>{x.evalue(), w_.evalue(), s_.evalue(),
                                               EValue(int64_t{kGroup}), EValue(), out_.evalue(), EValue()}),
        kernel_(quant == 0 ? "torchlight::linear_int8.out" : "torchlight::linear_8da4w.out", args_,
                0b110) {}  // Weight and scales are constants.
  bool run() { return kernel_.run(); }

 private:
  TestTensor w_, s_, out_;
  KernelArgs args_;
  PreparedKernel kernel_;
};

void BM_prefill_layers(benchmark::State& state) {
  const int quant = static_cast<int>(state.range(0));
  const int64_t layers = state.range(1);
  threadpool::set_num_threads(static_cast<size_t>(state.range(2)));
  TestTensor x288(ScalarType::kFloat, {kRows, 288}, random_values(kRows * 288, 5, -1, 1));
  TestTensor x768(ScalarType::kFloat, {kRows, 768}, random_values(kRows * 768, 6, -1, 1));
  std::vector<std::unique_ptr<Linear>> linears;
  uint64_t seed = 10;
  for (int64_t l = 0; l < layers; ++l) {
    for (int i = 0; i < 4; ++i) linears.push_back(std::make_unique<Linear>(quant, x288, 288, 288, seed += 2));
    for (int i = 0; i < 2; ++i) linears.push_back(std::make_unique<Linear>(quant, x288, 288, 768, seed += 2));
    linears.push_back(std::make_unique<Linear>(quant, x768, 768, 288, seed += 2));
  }
  const int64_t repeat = state.range(3);
  for (auto _ : state) {
    for (auto& linear : linears) {
      for (int64_t i = 0; i < repeat; ++i) {
        if (!linear->run()) state.SkipWithError("kernel failed");
      }
    }
    benchmark::ClobberMemory();
  }
  state.counters["calls"] = static_cast<double>(linears.size() * static_cast<size_t>(repeat));
  state.SetLabel(quantized::quant_isa_name(quantized::quant_isa()));
}
BENCHMARK(BM_prefill_layers)
    ->ArgsProduct({{0, 1}, {1, 6}, {1, 2}, {1}})
    ->Args({0, 1, 1, 7})
    ->Args({1, 1, 1, 7})
    ->ArgNames({"quant", "layers", "threads", "repeat"})
    ->Unit(benchmark::kMicrosecond)
    ->UseRealTime();

// Scalar work the optimiser cannot drop: `us` microseconds' worth at about
// 1 ns a step (a fixed amount of work, not of time, so a descheduled
// thread does the same gap).
void busy_for(double us) {
  volatile uint64_t sink = 0;
  const int64_t steps = static_cast<int64_t>(us * 1000);
  for (int64_t i = 0; i < steps; ++i) sink = sink * 31 + static_cast<uint64_t>(i);
}

double thread_cpu_seconds() {
  timespec t{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) + 1e-9 * static_cast<double>(t.tv_nsec);
}

// Timed by the calling thread's CPU time of the call alone (so a loaded
// machine's waits are left out); at 2 threads that misses the worker's
// share, so read the 1-thread rows for the start-up cost.
void BM_prefill_gap(benchmark::State& state) {
  const int quant = static_cast<int>(state.range(0));
  const double gap = static_cast<double>(state.range(1));
  threadpool::set_num_threads(static_cast<size_t>(state.range(2)));
  TestTensor x(ScalarType::kFloat, {kRows, 288}, random_values(kRows * 288, 5, -1, 1));
  Linear linear(quant, x, 288, 288, 3);
  for (auto _ : state) {
    busy_for(gap);
    const double start = thread_cpu_seconds();
    if (!linear.run()) state.SkipWithError("kernel failed");
    state.SetIterationTime(thread_cpu_seconds() - start);
  }
}
BENCHMARK(BM_prefill_gap)
    ->ArgsProduct({{0, 1}, {0, 10, 30, 100, 300, 1000}, {1, 2}})
    ->ArgNames({"quant", "gap_us", "threads"})
    ->Unit(benchmark::kMicrosecond)
    ->UseManualTime();

void BM_pool_round_trip(benchmark::State& state) {
  threadpool::set_num_threads(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    threadpool::parallel_for(2, 1, [](size_t b, size_t e) { benchmark::DoNotOptimize(b + e); });
  }
}
BENCHMARK(BM_pool_round_trip)->Arg(1)->Arg(2)->ArgName("threads")->Unit(benchmark::kNanosecond)->UseRealTime();

#if defined(__x86_64__)
__attribute__((target("amx-tile"))) void load_and_release(const quantized::AmxTileConfig& config) {
  _tile_loadconfig(&config);
  _tile_release();
}

void BM_amx_tile_config(benchmark::State& state) {
  if (!quantized::cpu_has_quant_isa(quantized::QuantIsa::kAmx)) {
    state.SkipWithError("no AMX");
    return;
  }
  quantized::AmxTileConfig config;
  for (int t = 0; t < 8; ++t) config.set(t, 16, 64);
  for (auto _ : state) load_and_release(config);
}
BENCHMARK(BM_amx_tile_config)->Unit(benchmark::kNanosecond);
#endif

}  // namespace
}  // namespace torchlight

BENCHMARK_MAIN();
