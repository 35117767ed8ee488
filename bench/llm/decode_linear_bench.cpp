// One decode step's quantized linears (torchlight::linear_int8's and linear_8da4w's
// loops, linear_int8.h, linear_8da4w.h) at stories15m's and stories110m's shapes, one row:
//
//   BM_int8_decode_isa/isa/K/N: the loop on one thread for every instruction
//     set this CPU runs (1 avx2, 3 avx512), weight GB/s.
//   BM_int8_decode_vnni/isa/sums/K/N: the VNNI digit loop (linear_int8_vnni.h;
//     2 AVX-VNNI, 3 AVX-512 VNNI) on one thread, the row's split included, with
//     the column sums from prepare (sums 1) or summed in the loop (0).
//   BM_int8_decode_int16_digits/K/N: the AVX2 int16-digit loop
//     (linear_int8_int16_digits.h: what an AVX2 CPU without VNNI runs) on
//     one thread, the row's split included; against BM_int8_decode_isa/isa:1
//     (the float loop it replaced), ideally with
//     --benchmark_enable_random_interleaving=true and repetitions.
//   BM_int8_decode_int16_digits_memory/K/N: the same with the weights
//     streaming from memory (a different copy each call, 128 MiB of them),
//     as every linear of stories110m runs in decode.
//   BM_8da4w_quantize_row/isa/K: linear_8da4w's per-call activation step
//     for one row (quantize_arranged_8da4w.h, group 32: the row's range,
//     its parameters, the quantized arranged row) with each ISA's choice
//     (1 avx2: the portable steps, 3 avx512).
//   BM_8da4w_decode_isa/isa/K/N: linear_8da4w's one-row decode (group 32,
//     as the operator runs it on constant weights: the loop with the column
//     weight sums from prepare, or where the ISA has it the loop on the
//     weights prepare packed, linear_8da4w_packed.h, labelled "packed") on
//     one thread for every instruction set this CPU runs (0 generic, 1 avx2,
//     2 avxvnni, 3 avx512vnni); GB/s of weight bytes read (nibbles and
//     group scales).
//   BM_8da4w_decode_split/threads/split/K/N: that decode inline, split, or
//     as the operator decides (as BM_int8_decode_split below), wall time.
//   BM_int8_decode_split/threads/split/K/N: the loop inline on the calling
//     thread (split 0), split over the pool in column chunks (split 1,
//     column_chunks.h), or as the operator decides (split 2:
//     linear_runs_parallel, which splits these sizes only while the
//     workers spin), wall time: the fork-join's cost against its speed-up
//     at each size.
//
//   ./torchlight exec build/release/bench/llm/torchlight_decode_linear_bench
//       --benchmark_repetitions=3
//
// Weights are in cache after the first iteration at every size but the
// classifiers' (9-24 MiB), as in decode of these models.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/quantized/column_chunks.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_packed.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_int16_digits.h"
#include "kernels/quantized/linear_int8_vnni.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/quant_isa.h"
#include "kernels/quantized/quantize_arranged_8da4w.h"

namespace torchlight::quantized {
namespace {

struct Int8Problem {
  std::vector<float> x, scales, out;
  std::vector<int8_t> weight;
  RowsInt8 rows{};
  Int8Problem(int64_t k, int64_t n) : x(k), scales(n, 0.01f), out(n), weight(n * k) {
    uint32_t seed = 1;
    for (int8_t& v : weight) v = static_cast<int8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 17) * 0.125f - 1.0f;
    rows.x = x.data();
    rows.rows = 1;
    rows.weight = weight.data();
    rows.scales = scales.data();
    rows.k = k;
    rows.n = n;
    rows.out = out.data();
  }
};

void report_weights(benchmark::State& state, int64_t bytes) {
  state.counters["GB/s"] = benchmark::Counter(static_cast<double>(bytes) * 1e-9 *
                                                  static_cast<double>(state.iterations()),
                                              benchmark::Counter::kIsRate);
}

// The *_decode_split benchmarks' loop: run(n_begin, n_end) over [0, n)
// inline (state.range(1) 0), split in column chunks (1), or as the operator
// decides (2: linear_runs_parallel), on state.range(0) threads.
template <typename Run>
void time_split(benchmark::State& state, int64_t k, int64_t n, int64_t bytes, const Run& run) {
  const auto threads = static_cast<size_t>(state.range(0));
  const int64_t split = state.range(1);
  for (auto _ : state) {
    if (split == 1) {
      parallel_column_chunks(n, run);
    } else if (split == 2) {
      parallel_column_chunks(n, 1, k, run);
    } else {
      run(0, n);
    }
    benchmark::ClobberMemory();
  }
  report_weights(state, bytes);
  const char* how[] = {" threads, inline", " threads, split", " threads, as the operator"};
  state.SetLabel(std::to_string(threads) + how[split]);
}

void BM_int8_decode_isa(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), n = state.range(2);
  if (!cpu_has_quant_isa(isa)) {
    state.SkipWithError("this CPU does not run that ISA");
    return;
  }
  Int8Problem p(k, n);
  const ColumnsInt8Fn columns = select_linear_int8(isa);
  for (auto _ : state) {
    columns(p.rows, 0, n);
    benchmark::ClobberMemory();
  }
  report_weights(state, n * k);
  state.SetLabel(quant_isa_name(isa));
}

void BM_int8_decode_vnni(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const bool precomputed = state.range(1) != 0;
  const int64_t k = state.range(2), n = state.range(3);
  if (select_linear_int8_vnni(isa) == nullptr || k > kMaxKInt8Vnni || !cpu_has_quant_isa(isa)) {
    state.SkipWithError("this CPU does not run that ISA");
    return;
  }
  Int8Problem p(k, n);
  std::vector<int32_t> sums(static_cast<size_t>(n));
  weight_sums_qs8(p.weight.data(), k, 0, n, sums.data());
  std::vector<uint8_t> digits(int8_vnni_digit_bytes(k) + 64);
  auto* aligned = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(digits.data()) + 63) / 64 * 64);
  const ColumnsInt8VnniFn columns = select_linear_int8_vnni(isa);
  const SplitRowInt8VnniFn split = select_split_row_int8_vnni(isa);
  RowInt8Vnni row{};
  row.u = aligned;
  row.plane = static_cast<int64_t>(int8_vnni_digit_bytes(k) / 3);
  row.weight = p.weight.data();
  row.scales = p.scales.data();
  row.weight_sums = precomputed ? sums.data() : nullptr;
  row.k = k;
  row.out = p.out.data();
  for (auto _ : state) {
    split(p.x.data(), k, aligned, &row.exponent);
    columns(row, 0, n);
    benchmark::ClobberMemory();
  }
  report_weights(state, n * k);
  state.SetLabel(quant_isa_name(isa));
}

// The int16-digit loop on one row; with `from_memory`, over copies of the
// weights adding up to kColdWeightBytes, a different copy each call, so
// every call streams its weights from memory as decode of stories110m does
// (its 109.5 MB of int8 weights per token are 14 times L3).
constexpr int64_t kColdWeightBytes = int64_t{128} << 20;

void run_int8_decode_int16_digits(benchmark::State& state, bool from_memory) {
  const int64_t k = state.range(0), n = state.range(1);
#if defined(__x86_64__) || defined(_M_X64)
  if (!cpu_has_quant_isa(QuantIsa::kAvx2) || k > kMaxKInt16Digits) {
    state.SkipWithError("this CPU lacks AVX2");
    return;
  }
  Int8Problem p(k, n);
  const int64_t copies = from_memory ? std::max<int64_t>(2, kColdWeightBytes / (n * k) + 1) : 1;
  std::vector<int8_t> cold(static_cast<size_t>((copies - 1) * n * k));
  for (int64_t c = 0; c + 1 < copies; ++c) std::copy(p.weight.begin(), p.weight.end(), cold.begin() + c * n * k);
  std::vector<int16_t> digits(int16_digit_bytes(k) / sizeof(int16_t) + 32);
  auto* aligned = reinterpret_cast<int16_t*>((reinterpret_cast<uintptr_t>(digits.data()) + 63) / 64 * 64);
  RowInt8Int16Digits row{};
  row.digits = aligned;
  row.plane = int16_digit_plane(k);
  row.scales = p.scales.data();
  row.k = k;
  row.out = p.out.data();
  int64_t call = 0;
  for (auto _ : state) {
    const int64_t copy = call++ % copies;
    row.weight = copy == 0 ? p.weight.data() : cold.data() + (copy - 1) * n * k;
    split_row_int16_digits_avx2(p.x.data(), k, aligned, &row.exponent);
    linear_int8_int16_digits_avx2(row, 0, n);
    benchmark::ClobberMemory();
  }
  report_weights(state, n * k);
#else
  (void)from_memory;
  state.SkipWithError("x86 only");
#endif
}

void BM_int8_decode_int16_digits(benchmark::State& state) { run_int8_decode_int16_digits(state, false); }
void BM_int8_decode_int16_digits_memory(benchmark::State& state) { run_int8_decode_int16_digits(state, true); }

void BM_int8_decode_split(benchmark::State& state) {
  const int64_t k = state.range(2), n = state.range(3);
  threadpool::set_num_threads(static_cast<size_t>(state.range(0)));
  Int8Problem p(k, n);
  const ColumnsInt8Fn columns = select_linear_int8();
  time_split(state, k, n, n * k, [&](int64_t n_begin, int64_t n_end) {
    columns(p.rows, n_begin, n_end);
  });
}

// One quantized, arranged decode row against random packed int4 weights
// (group 32), with the columns' weight sums made as prepare makes them, and
// the weights packed for decode as prepare packs them where `isa` has the
// packed loop.
struct Problem8da4w {
  static constexpr int64_t kGroup = 32;
  std::vector<uint8_t> weight;
  std::vector<float> scales, u_folded, correction, out;
  std::vector<int8_t> xq;
  std::vector<uint8_t> packed_memory;
  Row8da4w row{};
  Packed8da4w packed;
  Packed8da4wFn packed_decode;
  Columns8da4wFn columns;
  Problem8da4w(int64_t k, int64_t n, QuantIsa isa)
      : weight(static_cast<size_t>(n * k / 2)), scales(static_cast<size_t>(n * k / kGroup), 0.01f),
        u_folded(static_cast<size_t>(n)), correction(static_cast<size_t>(k / kGroup)),
        out(static_cast<size_t>(n)), xq(static_cast<size_t>(k)),
        packed_decode(select_packed_8da4w(k, kGroup, isa)), columns(select_linear_8da4w(kGroup, isa)) {
    uint32_t seed = 1;
    for (uint8_t& v : weight) v = static_cast<uint8_t>((seed = seed * 1664525u + 1013904223u) >> 24);
    std::vector<float> x(static_cast<size_t>(k));
    for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 23) * 0.37f - 4.0f;
    double scale = 0;
    int64_t zero_point = 0;
    token_qparams(x.data(), k, &scale, &zero_point);
    quantize_arranged_8da4w(x.data(), k, kGroup, scale, static_cast<int32_t>(zero_point), xq.data(),
                            correction.data());
    fold_weight_sums_8da4w(weight.data(), scales.data(), k, kGroup, 0, n, u_folded.data());
    row.xq = xq.data();
    row.correction = correction.data();
    row.rows = 1;
    row.zero_point[0] = static_cast<int32_t>(zero_point);
    row.scale[0] = static_cast<float>(scale);
    row.weight = weight.data();
    row.w_scales = scales.data();
    row.u_folded = u_folded.data();
    row.k = k;
    row.n = n;
    row.group = kGroup;
    row.out = out.data();
    if (packed_decode != nullptr) {
      packed_memory.resize(packed_8da4w_bytes(k, n, kGroup) + 64);
      void* aligned = packed_memory.data() + (64 - reinterpret_cast<uintptr_t>(packed_memory.data()) % 64) % 64;
      pack_8da4w(weight.data(), scales.data(), k, n, kGroup, aligned, 0, packed_blocks_8da4w(n));
      packed = packed_8da4w_view(aligned, k, n, kGroup);
    }
  }
  // Columns [n_begin, n_end) as the operator's decode runs them.
  void decode(int64_t n_begin, int64_t n_end) const {
    if (packed_decode != nullptr) {
      const PackedRow8da4w packed_row{row.xq, row.correction, row.zero_point[0], row.scale[0], row.bias,
                                      row.out};
      packed_decode(packed, packed_row, n_begin, n_end);
    } else {
      columns(row, n_begin, n_end);
    }
  }
  // Nibbles and float32 group scales.
  int64_t weight_bytes() const {
    return static_cast<int64_t>(weight.size() + sizeof(float) * scales.size());
  }
};

void BM_8da4w_decode_isa(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), n = state.range(2);
  if (!cpu_has_quant_isa(isa)) {
    state.SkipWithError("this CPU does not run that ISA");
    return;
  }
  Problem8da4w p(k, n, isa);
  for (auto _ : state) {
    p.decode(0, n);
    benchmark::ClobberMemory();
  }
  report_weights(state, p.weight_bytes());
  state.SetLabel(std::string(quant_isa_name(isa)) + (p.packed_decode != nullptr ? " packed" : ""));
}

void BM_8da4w_decode_split(benchmark::State& state) {
  const int64_t k = state.range(2), n = state.range(3);
  threadpool::set_num_threads(static_cast<size_t>(state.range(0)));
  Problem8da4w p(k, n, quant_isa());
  time_split(state, k, n, p.weight_bytes(), [&](int64_t n_begin, int64_t n_end) {
    p.decode(n_begin, n_end);
  });
}

void BM_8da4w_quantize_row(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), group = 32;
  if (!cpu_has_quant_isa(isa)) {
    state.SkipWithError("this CPU does not run that ISA");
    return;
  }
  std::vector<float> x(static_cast<size_t>(k));
  for (size_t i = 0; i < x.size(); ++i) x[i] = static_cast<float>(i % 23) * 0.37f - 4.0f;
  std::vector<int8_t> arranged(x.size());
  std::vector<float> correction(static_cast<size_t>(k / group));
  const QuantizeArranged8da4wFn quantize = select_quantize_arranged_8da4w(group, isa);
  const RowRangeF32Fn range = select_row_range_f32(isa);
  for (auto _ : state) {
    double scale = 0;
    int64_t zero_point = 0;
    token_qparams_from_range<float>(range(x.data(), k), &scale, &zero_point);
    quantize(x.data(), k, group, scale, static_cast<int32_t>(zero_point), arranged.data(),
             correction.data());
    benchmark::ClobberMemory();
  }
  state.SetLabel(quant_isa_name(isa));
}

BENCHMARK(BM_8da4w_quantize_row)->Apply([](benchmark::internal::Benchmark* b) {
  for (const int64_t k : {288, 768, 2048}) {
    for (const int64_t isa : {1, 3}) b->Args({isa, k});
  }
  b->ArgNames({"isa", "K"});
  b->Unit(benchmark::kNanosecond);
});

// K x N: stories15m's attention (288 x 288), feed-forward (288 x 768,
// 768 x 288) and classifier (288 x 32000); stories110m's 768 x 768,
// 768 x 2048, 2048 x 768 and 768 x 32000.
constexpr int64_t kShapes[][2] = {{288, 288},  {288, 768},  {768, 288},   {288, 32000},
                                  {768, 768},  {768, 2048}, {2048, 768}, {768, 32000}};

BENCHMARK(BM_int8_decode_isa)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) {
    for (const int64_t isa : {1, 3}) b->Args({isa, s[0], s[1]});
  }
  b->ArgNames({"isa", "K", "N"});
  b->Unit(benchmark::kMicrosecond);
});

BENCHMARK(BM_int8_decode_int16_digits)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) b->Args({s[0], s[1]});
  b->ArgNames({"K", "N"});
  b->Unit(benchmark::kMicrosecond);
});

BENCHMARK(BM_int8_decode_int16_digits_memory)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) b->Args({s[0], s[1]});
  b->ArgNames({"K", "N"});
  b->Unit(benchmark::kMicrosecond);
});

BENCHMARK(BM_int8_decode_vnni)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) {
    for (const int64_t isa : {2, 3}) {
      for (const int64_t sums : {0, 1}) b->Args({isa, sums, s[0], s[1]});
    }
  }
  b->ArgNames({"isa", "sums", "K", "N"});
  b->Unit(benchmark::kMicrosecond);
});

BENCHMARK(BM_8da4w_decode_isa)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) {
    for (const int64_t isa : {0, 1, 2, 3}) b->Args({isa, s[0], s[1]});
  }
  b->ArgNames({"isa", "K", "N"});
  b->Unit(benchmark::kMicrosecond);
});

BENCHMARK(BM_8da4w_decode_split)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) {
    for (const int64_t split : {0, 1, 2}) b->Args({2, split, s[0], s[1]});
  }
  b->ArgNames({"threads", "split", "K", "N"});
  b->Unit(benchmark::kMicrosecond);
  b->UseRealTime();
});

BENCHMARK(BM_int8_decode_split)->Apply([](benchmark::internal::Benchmark* b) {
  for (const auto& s : kShapes) {
    for (const int64_t split : {0, 1, 2}) b->Args({2, split, s[0], s[1]});
  }
  b->ArgNames({"threads", "split", "K", "N"});
  b->Unit(benchmark::kMicrosecond);
  b->UseRealTime();
});

}  // namespace
}  // namespace torchlight::quantized

BENCHMARK_MAIN();
