// The optimized GEMM against the portable kernel on the shapes that matter
// for LLM inference (M x K x N; weights [N, K] as nn.Linear stores them):
//
//   decode  (GEMV): 1 x 768 x 768, 1 x 768 x 3072, 1 x 3072 x 768,
//                   1 x 768 x 50257 (GPT-2 lm_head), 1 x 768 x 32000 (Llama)
//   prefill (GEMM): 128 x 768 x 768, 128 x 768 x 2304, 128 x 3072 x 768
//   stories15m:     1 and 128 rows of 288 x 288, 288 x 768, 768 x 288
//
// Benchmarks are named <impl>/<M>x<K>x<N>/t<threads>:
//   linear     gemm with the weight read transposed (what aten::linear.out
//              runs), on the best instruction set; also linear_avx512,
//              linear_avx2 and linear_portable (those code paths forced;
//              skipped where the CPU lacks them), and linear_amx_split
//              (AMX with the weight split beforehand, as the XNNPACK
//              delegate's conv2d stages do; only where the CPU has AMX);
//   mm         gemm on a row-major [K, N] B (aten::mm.out);
//   portable   the portable kernel (aten::mm.out with the transposed weight
//              view, single-threaded as it always is);
//   peak       AVX-512 FMA throughput of one core, the compute ceiling;
//              peak/amx_bf16 the tdpbf16ps rate (and with the gemm kernel's
//              tile loads from L1: peak/amx_bf16_loads).
// --shapes=MxKxN,... replaces the list (e.g. a CNN's convolutions as
// im2col products: M output pixels, K = kh * kw * Cin, N = Cout).
// Counters: flops (FLOP/s) and weight_bytes (bytes of B read per second),
// from the mean time; min_us, the fastest single call (on a shared machine
// the call least disturbed by other processes; compare.py uses it).
// bench/gemm/compare.py runs this binary, times torch on the same shapes
// and prints the side-by-side table.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <chrono>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/gemm/owned_workspace.h"
#include "kernels/portable/portable_ops.h"
#include "runtime/core/evalue.h"
#include "runtime/core/tensor.h"
#include "runtime/kernel/kernel_context.h"

namespace torchlight::bench {

float avx512_fma_loop(int64_t iterations);
float avx2_fma_loop(int64_t iterations);
float amx_bf16_loop(int64_t iterations, bool loads);

namespace {

using optimized::GemmIsa;

struct Shape {
  int64_t m, k, n;
};

const std::vector<Shape> kLlmShapes = {
    {1, 768, 768},   {1, 768, 3072},   {1, 3072, 768}, {1, 768, 50257}, {1, 768, 32000},
    {128, 768, 768}, {128, 768, 2304}, {128, 3072, 768},
    // stories15m (dim 288, hidden 768): its decode and 128-token prefill.
    {1, 288, 288},   {1, 288, 768},    {1, 768, 288},  {128, 288, 288}, {128, 288, 768},
    {128, 768, 288},
};

// "MxKxN,MxKxN": false on anything else (sizes must be positive).
bool parse_shapes(const std::string& text, std::vector<Shape>* shapes) {
  size_t begin = 0;
  while (begin <= text.size()) {
    const size_t end = std::min(text.find(',', begin), text.size());
    Shape s{};
    char tail = 0;
    if (std::sscanf(text.substr(begin, end - begin).c_str(), "%" SCNd64 "x%" SCNd64 "x%" SCNd64 "%c",
                    &s.m, &s.k, &s.n, &tail) != 3 ||
        s.m < 1 || s.k < 1 || s.n < 1) {
      return false;
    }
    shapes->push_back(s);
    begin = end + 1;
  }
  return !shapes->empty();
}

std::vector<float> random_floats(int64_t count, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(static_cast<size_t>(count));
  for (auto& x : v) x = dist(rng);
  return v;
}

// Times one call of the benchmarked body, keeping the fastest.
class MinTimer {
 public:
  void start() { start_ = std::chrono::steady_clock::now(); }
  void stop() {
    const double us =
        std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start_).count();
    if (us < min_us_) min_us_ = us;
  }
  double min_us() const { return min_us_; }

 private:
  std::chrono::steady_clock::time_point start_;
  double min_us_ = 1e30;
};

void set_counters(benchmark::State& state, const Shape& s, const MinTimer& timer) {
  state.counters["min_us"] = timer.min_us();
  state.counters["flops"] = benchmark::Counter(2.0 * s.m * s.n * s.k,
                                               benchmark::Counter::kIsIterationInvariantRate);
  state.counters["weight_bytes"] = benchmark::Counter(
      4.0 * s.n * s.k, benchmark::Counter::kIsIterationInvariantRate, benchmark::Counter::kIs1024);
}

// Optimized gemm: transposed weight (linear) or row-major B (mm).
void run_ours(benchmark::State& state, Shape s, size_t threads, GemmIsa isa, bool transposed,
              bool pre_split = false) {
  threadpool::set_num_threads(threads);
  if (!optimized::set_gemm_isa(isa).ok()) {
    state.SkipWithError("instruction set not supported");
    return;
  }
  const std::vector<float> a = random_floats(s.m * s.k, 1);
  const std::vector<float> w = random_floats(s.n * s.k, 2);
  const std::vector<float> bias = random_floats(s.n, 3);
  std::vector<float> c(static_cast<size_t>(s.m * s.n));
  static optimized::OwnedGemmWorkspace workspace(16);
  optimized::GemmProblem p;
  p.workspace = workspace.get();
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a = {a.data(), s.k, 1};
  p.b = transposed ? optimized::ConstMatrix{w.data(), 1, s.k}
                   : optimized::ConstMatrix{w.data(), s.n, 1};
  p.c = c.data();
  p.ldc = s.n;
  if (transposed) {
    p.beta = 1.0f;
    p.addend = {bias.data(), 0, 1};
  }
  std::vector<float> split;
  if (pre_split) {
    split.resize(optimized::gemm_amx_split_bytes(s.n, s.k) / sizeof(float) + 16);
    char* aligned = reinterpret_cast<char*>((reinterpret_cast<uintptr_t>(split.data()) + 63) / 64 * 64);
    if (!optimized::gemm_amx_split_weight(w.data(), s.k, s.n, s.k, aligned)) {
      state.SkipWithError("no AMX split");
      return;
    }
    p.b_amx_split = aligned;
  }
  MinTimer timer;
  for (auto _ : state) {
    timer.start();
    const bool ok = optimized::gemm(p).ok();
    timer.stop();
    if (!ok) {
      state.SkipWithError("gemm failed");
      break;
    }
    benchmark::DoNotOptimize(c.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, timer);
  optimized::reset_gemm_isa();
}

// A float tensor over owned storage for the portable kernel.
struct OwnedTensor {
  OwnedTensor(std::vector<SizesType> sizes_in, std::vector<DimOrderType> order,
              std::vector<float> values)
      : sizes(std::move(sizes_in)),
        dim_order(std::move(order)),
        strides(sizes.size()),
        data(std::move(values)),
        impl(ScalarType::kFloat, sizes.size(), sizes.data(), data.data(), dim_order.data(),
             (compute_strides({sizes.data(), sizes.size()}, {dim_order.data(), dim_order.size()},
                              strides.data()),
              strides.data())) {}
  std::vector<SizesType> sizes;
  std::vector<DimOrderType> dim_order;
  std::vector<StridesType> strides;
  std::vector<float> data;
  TensorImpl impl;
};

// portable::mm_out with mat2 the [K, N] transposed view of the weight.
void run_portable(benchmark::State& state, Shape s) {
  OwnedTensor a({SizesType(s.m), SizesType(s.k)}, {0, 1}, random_floats(s.m * s.k, 1));
  OwnedTensor w({SizesType(s.k), SizesType(s.n)}, {1, 0}, random_floats(s.n * s.k, 2));
  OwnedTensor out({SizesType(s.m), SizesType(s.n)}, {0, 1},
                  std::vector<float>(static_cast<size_t>(s.m * s.n)));
  EValue values[] = {EValue(Tensor(&a.impl)), EValue(Tensor(&w.impl)), EValue(Tensor(&out.impl)),
                     EValue()};
  EValue* args[] = {&values[0], &values[1], &values[2], &values[3]};
  MinTimer timer;
  for (auto _ : state) {
    KernelContext ctx(nullptr, nullptr, "aten::mm.out");
    timer.start();
    portable::mm_out(ctx, Span<EValue*>(args, 4));
    timer.stop();
    if (ctx.failed()) {
      state.SkipWithError(ctx.status().message());
      break;
    }
    benchmark::DoNotOptimize(out.data.data());
    benchmark::ClobberMemory();
  }
  set_counters(state, s, timer);
}

#if defined(TL_BENCH_HAVE_AVX512_PEAK)
// One core's FMA peak at the vector width of `isa` (kAvx512 or kAvx2).
void run_peak(benchmark::State& state, GemmIsa isa) {
  if (!optimized::gemm_isa_supported(isa)) {
    state.SkipWithError(isa == GemmIsa::kAvx512 ? "no AVX-512" : "no AVX2 + FMA");
    return;
  }
  constexpr int64_t kRounds = 1 << 20;
  const bool wide = isa == GemmIsa::kAvx512;
  for (auto _ : state) {
    benchmark::DoNotOptimize(wide ? avx512_fma_loop(kRounds) : avx2_fma_loop(kRounds));
  }
  state.counters["flops"] = benchmark::Counter((wide ? 768.0 : 192.0) * kRounds,
                                               benchmark::Counter::kIsIterationInvariantRate);
}

void run_peak_amx(benchmark::State& state, bool loads) {
  if (!optimized::gemm_isa_supported(GemmIsa::kAmx)) {
    state.SkipWithError("no AMX-BF16");
    return;
  }
  constexpr int64_t kRounds = 1 << 16;
  for (auto _ : state) benchmark::DoNotOptimize(amx_bf16_loop(kRounds, loads));
  state.counters["flops"] =
      benchmark::Counter(65536.0 * kRounds, benchmark::Counter::kIsIterationInvariantRate);
}
#endif

std::string shape_name(const Shape& s) {
  return std::to_string(s.m) + "x" + std::to_string(s.k) + "x" + std::to_string(s.n);
}

void register_all(const std::vector<Shape>& shapes) {
  const GemmIsa best = optimized::active_gemm_isa();
  for (const Shape& s : shapes) {
    for (size_t threads : {size_t{1}, size_t{2}}) {
      const std::string suffix = "/" + shape_name(s) + "/t" + std::to_string(threads);
      benchmark::RegisterBenchmark(("linear" + suffix).c_str(), [s, threads, best](benchmark::State& st) {
        run_ours(st, s, threads, best, true);
      })->Unit(benchmark::kMicrosecond)->UseRealTime();
      benchmark::RegisterBenchmark(("linear_avx512" + suffix).c_str(),
                                   [s, threads](benchmark::State& st) {
                                     run_ours(st, s, threads, GemmIsa::kAvx512, true);
                                   })->Unit(benchmark::kMicrosecond)->UseRealTime();
      benchmark::RegisterBenchmark(("linear_amx_split" + suffix).c_str(),
                                   [s, threads](benchmark::State& st) {
                                     run_ours(st, s, threads, GemmIsa::kAmx, true, true);
                                   })->Unit(benchmark::kMicrosecond)->UseRealTime();
      benchmark::RegisterBenchmark(("linear_avx2" + suffix).c_str(),
                                   [s, threads](benchmark::State& st) {
                                     run_ours(st, s, threads, GemmIsa::kAvx2, true);
                                   })->Unit(benchmark::kMicrosecond)->UseRealTime();
      benchmark::RegisterBenchmark(("linear_portable" + suffix).c_str(),
                                   [s, threads](benchmark::State& st) {
                                     run_ours(st, s, threads, GemmIsa::kPortable, true);
                                   })->Unit(benchmark::kMicrosecond)->UseRealTime();
      if (s.m > 1) {
        benchmark::RegisterBenchmark(("mm" + suffix).c_str(), [s, threads, best](benchmark::State& st) {
          run_ours(st, s, threads, best, false);
        })->Unit(benchmark::kMicrosecond)->UseRealTime();
      }
    }
    benchmark::RegisterBenchmark(("portable/" + shape_name(s) + "/t1").c_str(),
                                 [s](benchmark::State& st) { run_portable(st, s); })
        ->Unit(benchmark::kMicrosecond)
        ->UseRealTime();
  }
#if defined(TL_BENCH_HAVE_AVX512_PEAK)
  benchmark::RegisterBenchmark("peak/avx512_fma/t1", [](benchmark::State& st) {
    run_peak(st, GemmIsa::kAvx512);
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/avx2_fma/t1", [](benchmark::State& st) {
    run_peak(st, GemmIsa::kAvx2);
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/amx_bf16/t1", [](benchmark::State& st) {
    run_peak_amx(st, false);
  })->Unit(benchmark::kMicrosecond);
  benchmark::RegisterBenchmark("peak/amx_bf16_loads/t1", [](benchmark::State& st) {
    run_peak_amx(st, true);
  })->Unit(benchmark::kMicrosecond);
#endif
}

}  // namespace
}  // namespace torchlight::bench

int main(int argc, char** argv) {
  std::vector<torchlight::bench::Shape> shapes = torchlight::bench::kLlmShapes;
  int kept = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--shapes=", 0) != 0) {
      argv[kept++] = argv[i];
      continue;
    }
    shapes.clear();
    if (!torchlight::bench::parse_shapes(arg.substr(9), &shapes)) {
      std::fprintf(stderr, "error: --shapes wants MxKxN[,MxKxN...] with positive sizes, got '%s'\n",
                   arg.c_str() + 9);
      return 1;
    }
  }
  argc = kept;
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  torchlight::bench::register_all(shapes);
  std::printf("gemm instruction set: %s\n",
              torchlight::optimized::to_string(torchlight::optimized::active_gemm_isa()));
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
