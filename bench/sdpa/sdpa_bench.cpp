// torchlight::sdpa_with_kv_cache.out against a naive loop, on the attention
// shapes of GPT-2 124M and stories110M (12 heads, D = 64, a 1024-position
// cache): decode (T = 1) with 128, 512 and 1024 valid positions, and a
// T = 128 prefill; and stories15M's decode (6 heads, D = 48) at 160. "ours" is the whole kernel call (checks, cache writes,
// attention) through the thread pool; "ours/<isa>" runs one instruction-set
// build of the attention loops alone, single-threaded; "ours-f16" is the
// whole call on float16 caches (rows written rounded, tiles widened). After
// the Google Benchmark output, a table puts each case side by side with
// ratios.
//
//   build/release/bench/sdpa/torchlight_sdpa_bench [--benchmark_min_time=0.2s]
#include <benchmark/benchmark.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bench/sdpa/random_values.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/llm/llm_kernels.h"
#include "kernels/llm/sdpa_dispatch.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::llm {
namespace {

using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;
using bench::random_values;

struct Case {
  const char* model;
  const char* phase;  // "decode" or "prefill"
  int rows;           // T
  int valid;          // Positions valid after the call: input_pos = valid - T .. valid - 1.
  int heads = 12;
  int head_dim = 64;
  int cache_len = 1024;
};

// GPT-2 124M and stories110M have the same attention shape; each is listed
// under its own name. stories15M: 6 heads of 48 (three 16-float vectors, not
// a multiple of four), a 256-position cache.
const Case kCases[] = {
    {"gpt2-124M", "decode", 1, 128},      {"gpt2-124M", "decode", 1, 512},
    {"gpt2-124M", "decode", 1, 1024},     {"gpt2-124M", "prefill", 128, 128},
    {"stories110M", "decode", 1, 128},    {"stories110M", "decode", 1, 512},
    {"stories110M", "decode", 1, 1024},   {"stories110M", "prefill", 128, 128},
    {"stories15M", "decode", 1, 160, 6, 48, 256},
};

std::string case_name(const Case& c) {
  return std::string(c.model) + "/" + c.phase + "/T=" + std::to_string(c.rows) +
         "/L=" + std::to_string(c.valid);
}

// The tensors of one call, with a full random cache of `cache_dtype`.
struct Inputs {
  explicit Inputs(const Case& c, ScalarType cache_dtype = ScalarType::kFloat)
      : kHeads(c.heads),
        kHeadDim(c.head_dim),
        kCacheLen(c.cache_len),
        query(ScalarType::kFloat, {1, kHeads, c.rows, kHeadDim},
              random_values(static_cast<size_t>(kHeads) * c.rows * kHeadDim, 1)),
        key(ScalarType::kFloat, {1, kHeads, c.rows, kHeadDim},
            random_values(static_cast<size_t>(kHeads) * c.rows * kHeadDim, 2)),
        value(ScalarType::kFloat, {1, kHeads, c.rows, kHeadDim},
              random_values(static_cast<size_t>(kHeads) * c.rows * kHeadDim, 3)),
        key_cache(cache_dtype, {1, kHeads, kCacheLen, kHeadDim},
                  random_values(static_cast<size_t>(kHeads) * kCacheLen * kHeadDim, 4)),
        value_cache(cache_dtype, {1, kHeads, kCacheLen, kHeadDim},
                    random_values(static_cast<size_t>(kHeads) * kCacheLen * kHeadDim, 5)),
        input_pos(ScalarType::kLong, {c.rows}, positions(c)),
        out(ScalarType::kFloat, {1, kHeads, c.rows, kHeadDim}) {}

  static std::vector<double> positions(const Case& c) {
    std::vector<double> pos;
    for (int i = 0; i < c.rows; ++i) pos.push_back(c.valid - c.rows + i);
    return pos;
  }

  const int kHeads, kHeadDim, kCacheLen;  // The case's shape.
  TestTensor query, key, value, key_cache, value_cache, input_pos, out;
};

// The contract, one row at a time, scalar loops in float: what a straight
// port of the eager definition does.
void naive_sdpa(Inputs& in, const Case& c, std::vector<float>& scores) {
  const float* q = in.query.tensor().const_data_ptr<float>();
  const float* k = in.key.tensor().const_data_ptr<float>();
  const float* v = in.value.tensor().const_data_ptr<float>();
  float* kc = in.key_cache.tensor().mutable_data_ptr<float>();
  float* vc = in.value_cache.tensor().mutable_data_ptr<float>();
  const int64_t* pos = in.input_pos.tensor().const_data_ptr<int64_t>();
  float* out = in.out.tensor().mutable_data_ptr<float>();
  const int kHeads = c.heads, kHeadDim = c.head_dim, kCacheLen = c.cache_len;
  const float scale = 1.0f / std::sqrt(static_cast<float>(kHeadDim));
  for (int h = 0; h < kHeads; ++h) {
    for (int i = 0; i < c.rows; ++i) {
      for (int d = 0; d < kHeadDim; ++d) {
        kc[(h * kCacheLen + pos[i]) * kHeadDim + d] = k[(h * c.rows + i) * kHeadDim + d];
        vc[(h * kCacheLen + pos[i]) * kHeadDim + d] = v[(h * c.rows + i) * kHeadDim + d];
      }
    }
  }
  for (int h = 0; h < kHeads; ++h) {
    for (int i = 0; i < c.rows; ++i) {
      const float* qr = q + (h * c.rows + i) * kHeadDim;
      const int n = static_cast<int>(pos[i]) + 1;
      float m = -INFINITY;
      for (int j = 0; j < n; ++j) {
        float dot = 0;
        for (int d = 0; d < kHeadDim; ++d) dot += qr[d] * kc[(h * kCacheLen + j) * kHeadDim + d];
        scores[j] = dot * scale;
        m = std::fmax(m, scores[j]);
      }
      float sum = 0;
      for (int j = 0; j < n; ++j) sum += (scores[j] = std::exp(scores[j] - m));
      float* o = out + (h * c.rows + i) * kHeadDim;
      for (int d = 0; d < kHeadDim; ++d) {
        float acc = 0;
        for (int j = 0; j < n; ++j) acc += scores[j] * vc[(h * kCacheLen + j) * kHeadDim + d];
        o[d] = acc / sum;
      }
    }
  }
}

void bench_naive(benchmark::State& state, Case c) {
  Inputs in(c);
  std::vector<float> scores(c.cache_len);
  for (auto _ : state) {
    naive_sdpa(in, c, scores);
    benchmark::ClobberMemory();
  }
}

void bench_ours(benchmark::State& state, Case c, size_t threads, ScalarType cache_dtype) {
  threadpool::set_num_threads(threads);
  Inputs in(c, cache_dtype);
  KernelArgs args{in.query.evalue(),     in.key.evalue(),       in.value.evalue(),
                  in.key_cache.evalue(), in.value_cache.evalue(), in.input_pos.evalue(),
                  EValue(),              in.out.evalue(),       EValue()};
  for (auto _ : state) {
    KernelContext ctx(nullptr, nullptr, "torchlight::sdpa_with_kv_cache.out");
    sdpa_with_kv_cache_out(ctx, args.span());
    if (ctx.failed()) state.SkipWithError(ctx.status().message());
    benchmark::ClobberMemory();
  }
}

// One instruction-set build of the attention loops, on the calling thread.
void bench_variant(benchmark::State& state, Case c, SdpaVariant variant) {
  Inputs in(c);
  const float scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim));
  SdpaProblem p = sdpa_problem_bhsd(in.query.tensor(), in.key_cache.tensor(),
                                    in.value_cache.tensor(), in.input_pos.tensor(),
                                    in.out.tensor(), scale);
  sdpa_plan_work(p, 1);
  const size_t items = sdpa_work_items(p);
  for (auto _ : state) {
    variant.attend(p, 0, items);
    benchmark::ClobberMemory();
  }
}

// Collects each run's time per iteration (microseconds) by name.
class TableReporter : public benchmark::ConsoleReporter {
 public:
  void ReportRuns(const std::vector<Run>& runs) override {
    ConsoleReporter::ReportRuns(runs);
    for (const Run& run : runs) {
      if (run.run_type != Run::RT_Iteration || run.skipped) continue;
      std::string name = run.benchmark_name();
      const std::string suffix = "/real_time";  // Added by UseRealTime().
      if (name.size() > suffix.size() &&
          name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
        name.resize(name.size() - suffix.size());
      }
      times_[name] = run.GetAdjustedRealTime();  // In the run's unit (us).
    }
  }

  double time(const std::string& name) const {
    auto it = times_.find(name);
    return it == times_.end() ? NAN : it->second;
  }

 private:
  std::map<std::string, double> times_;
};

}  // namespace
}  // namespace torchlight::llm

int main(int argc, char** argv) {
  using namespace torchlight::llm;
  const torchlight::Span<const SdpaVariant> variants = sdpa_variants();
  for (const Case& c : kCases) {
    const std::string name = case_name(c);
    benchmark::RegisterBenchmark(name + "/naive", bench_naive, c)->Unit(benchmark::kMicrosecond);
    for (size_t threads : {size_t{1}, size_t{2}}) {
      for (torchlight::ScalarType cache :
           {torchlight::ScalarType::kFloat, torchlight::ScalarType::kHalf}) {
        const char* kind = cache == torchlight::ScalarType::kHalf ? "/ours-f16" : "/ours";
        benchmark::RegisterBenchmark(name + kind + "/threads:" + std::to_string(threads),
                                     bench_ours, c, threads, cache)
            ->Unit(benchmark::kMicrosecond)
            ->UseRealTime();
      }
    }
    for (const SdpaVariant& v : variants) {
      benchmark::RegisterBenchmark(name + "/ours/" + v.name, bench_variant, c, v)
          ->Unit(benchmark::kMicrosecond);
    }
  }
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  TableReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter);
  benchmark::Shutdown();

  std::printf("\nTimes in microseconds per call; speedup = naive / ours; f16 = ours on float16 "
              "caches, f32/f16 its speedup.\n");
  std::printf("%-36s %10s %10s %10s %8s %8s %8s %8s", "case", "naive", "ours 1T", "ours 2T",
              "x 1T", "x 2T", "f16 1T", "f32/f16");
  for (const SdpaVariant& v : variants) std::printf(" %9s", v.name);
  std::printf("\n");
  for (const Case& c : kCases) {
    const std::string name = case_name(c);
    const double naive = reporter.time(name + "/naive");
    const double one = reporter.time(name + "/ours/threads:1");
    const double two = reporter.time(name + "/ours/threads:2");
    if (std::isnan(naive) && std::isnan(one)) continue;  // Filtered out.
    const double half = reporter.time(name + "/ours-f16/threads:1");
    std::printf("%-36s %10.1f %10.1f %10.1f %8.1f %8.1f %8.1f %8.2f", name.c_str(), naive, one,
                two, naive / one, naive / two, half, one / half);
    for (const SdpaVariant& v : variants) {
      std::printf(" %9.1f", reporter.time(name + "/ours/" + v.name));
    }
    std::printf("\n");
  }
  return 0;
}
