// The fused quantized linears' instruction-set paths side by side
// (kernels/quantized/quant_isa.h): the same loops the operators run, on one
// thread, for every ISA this CPU has, at stories15m's shapes (K x N of
// 288 x 768 and 768 x 288) and 2048 x 2048, decode (1 row) and prefill (64,
// 128 rows). 8da4w as a constant-weight program runs it (weight sums from
// prepare; 1-3 rows the loops, 4 or more the tile on paired activations);
// qs8 likewise (the VNNI loops' column sums from prepare).
//
//   ./torchlight exec build/release/bench/quantized/torchlight_quantized_isa_bench
//       --benchmark_repetitions=3
//
// Args: isa (0 generic, 1 avx2, 2 avxvnni, 3 avx512vnni, 4 amx: prefill on
// AMX tiles; qs8 with the rows laid out each call as the op does, 8da4w
// with the weights unpacked each call as the op does, its rows quantized
// once as for the other ISAs), K, N, rows[, group].
#include <benchmark/benchmark.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/linear_8da4w_amx.h"
#include "kernels/quantized/linear_int8_amx.h"
#include "kernels/quantized/linear_qs8.h"
#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {
namespace {

std::vector<uint8_t> random_bytes(size_t n, uint32_t seed) {
  std::vector<uint8_t> out(n);
  for (uint8_t& v : out) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<uint8_t>(seed >> 24);
  }
  return out;
}

bool skip_without(benchmark::State& state, QuantIsa isa) {
  if (cpu_has_quant_isa(isa)) return false;
  state.SkipWithError("this CPU does not run that ISA");
  return true;
}

// Multiply-adds per second and the ISA's name.
void report(benchmark::State& state, QuantIsa isa, int64_t macs_per_iteration) {
  state.counters["GMAC/s"] = benchmark::Counter(
      static_cast<double>(macs_per_iteration) * 1e-9 * static_cast<double>(state.iterations()),
      benchmark::Counter::kIsRate);
  state.SetLabel(quant_isa_name(isa));
}

// 8da4w on AMX tiles: one thread's columns as the op runs them (one panel).
void amx_8da4w(benchmark::State& state, const std::vector<uint8_t>& raw,
               const std::vector<uint8_t>& weight, const std::vector<float>& scales, int64_t k,
               int64_t n, int64_t rows, int64_t group) {
  const int64_t padded = (rows + kAmxTileRows8da4w - 1) / kAmxTileRows8da4w * kAmxTileRows8da4w;
  const int64_t stride = amx_row_stride_8da4w(k);
  std::vector<int8_t> xq(static_cast<size_t>(padded * stride));
  for (int64_t r = 0; r < rows; ++r) {
    std::copy(raw.begin() + r * k, raw.begin() + (r + 1) * k, reinterpret_cast<uint8_t*>(xq.data()) + r * stride);
  }
  std::vector<int32_t> zero_points(static_cast<size_t>(rows), 3);
  std::vector<float> row_scales(static_cast<size_t>(rows), 0.01f), out(static_cast<size_t>(rows * n));
  const size_t panel_bytes = linear_8da4w_amx_panel_bytes(k, group);
  std::vector<uint8_t> panel(panel_bytes + 64);
  void* aligned = panel.data() + (64 - reinterpret_cast<uintptr_t>(panel.data()) % 64) % 64;
  Rows8da4wAmx all{};
  all.xq = xq.data();
  all.stride = stride;
  all.zero_point = zero_points.data();
  all.scale = row_scales.data();
  all.rows = rows;
  all.weight = weight.data();
  all.w_scales = scales.data();
  all.k = k;
  all.n = n;
  all.group = group;
  all.out = out.data();
  for (auto _ : state) {
    linear_8da4w_amx_columns(all, aligned, 0, n);
    benchmark::ClobberMemory();
  }
  report(state, QuantIsa::kAmx, rows * n * k);
}

void BM_isa_8da4w(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), n = state.range(2), rows = state.range(3), group = state.range(4);
  if (skip_without(state, isa)) return;
  const int64_t groups = k / group;
  const std::vector<uint8_t> raw = random_bytes(static_cast<size_t>(rows * k), 1);
  const std::vector<uint8_t> weight = random_bytes(static_cast<size_t>(n * k / 2), 2);
  std::vector<float> scales(static_cast<size_t>(n * groups), 0.004f), u_folded(n), out(rows * n);
  std::vector<int8_t> xq(raw.size());
  std::vector<float> correction(static_cast<size_t>(rows * groups));
  for (int64_t r = 0; r < rows; ++r) {
    arrange_row_8da4w(reinterpret_cast<const int8_t*>(raw.data()) + r * k, k, group, 3,
                      xq.data() + r * k, correction.data() + r * groups);
  }
  if (isa == QuantIsa::kAmx) {
    amx_8da4w(state, raw, weight, scales, k, n, rows, group);
    return;
  }
  const bool tile = rows >= kRows8da4w;
  if (tile) pair_rows_8da4w(xq.data(), rows, k, group);
  select_fold_weight_sums_8da4w(group, isa)(weight.data(), scales.data(), k, group, 0, n,
                                            u_folded.data());
  const Columns8da4wFn columns = tile ? select_tile_8da4w(group, isa) : select_linear_8da4w(group, isa);
  Row8da4w base{};
  base.weight = weight.data();
  base.w_scales = scales.data();
  base.u_folded = u_folded.data();
  base.k = k;
  base.n = n;
  base.group = group;
  for (auto _ : state) {
    for (int64_t r0 = 0; r0 < rows; r0 += kRows8da4w) {
      Row8da4w block = base;
      block.rows = static_cast<int>(std::min<int64_t>(kRows8da4w, rows - r0));
      block.xq = xq.data() + r0 * k;
      block.correction = correction.data() + r0 * groups;
      for (int r = 0; r < block.rows; ++r) {
        block.zero_point[r] = 3;
        block.scale[r] = 0.01f;
      }
      block.out = out.data() + r0 * n;
      columns(block, 0, n);
    }
    benchmark::ClobberMemory();
  }
  report(state, isa, rows * n * k);
}

void BM_isa_qs8(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), n = state.range(2), rows = state.range(3);
  if (skip_without(state, isa)) return;
  const std::vector<uint8_t> x = random_bytes(static_cast<size_t>(rows * k), 1);
  const std::vector<uint8_t> weight = random_bytes(static_cast<size_t>(n * k), 2);
  std::vector<float> scales(n, 0.004f), out(rows * n);
  std::vector<int32_t> sums(n);
  const auto* w = reinterpret_cast<const int8_t*>(weight.data());
  weight_sums_qs8(w, k, 0, n, sums.data());
  const ColumnsQs8Fn columns = select_linear_qs8(isa);
  // AMX: the op's many-row path, the rows laid out for the tiles each call.
  const bool amx = isa == QuantIsa::kAmx && rows >= 32 && k % 4 == 0;
  std::vector<int8_t> packed(amx ? pack_rows_qs8_amx_bytes(rows, k) : 0);
  RowsQs8 base{};
  base.zero_point = 3;
  base.x_scale = 0.02f;
  base.weight = w;
  base.scales = scales.data();
  base.weight_sums = linear_qs8_uses_weight_sums(isa) ? sums.data() : nullptr;
  base.k = k;
  base.n = n;
  for (auto _ : state) {
    if (amx) {
      RowsQs8 all = base;
      all.x = reinterpret_cast<const int8_t*>(x.data());
      all.out = out.data();
      pack_rows_qs8_amx(all.x, rows, k, packed.data());
      linear_qs8_amx_columns(all, packed.data(), rows, 0, n);
      benchmark::ClobberMemory();
      continue;
    }
    for (int64_t r0 = 0; r0 < rows; r0 += kRowsQs8) {
      RowsQs8 block = base;
      block.x = reinterpret_cast<const int8_t*>(x.data()) + r0 * k;
      block.rows = static_cast<int>(std::min<int64_t>(kRowsQs8, rows - r0));
      block.out = out.data() + r0 * n;
      columns(block, 0, n);
    }
    benchmark::ClobberMemory();
  }
  report(state, isa, rows * n * k);
}

// linear_int8's AMX prefill by phase, one thread: 0 the activations' digit
// split, 1 the columns (weights laid out per block of 16 + tiles + combine),
// 2 both (the op's call on one thread). Min of the repetitions is the
// figure to read on a loaded machine (the "min" statistic).
void BM_int8_amx_phase(benchmark::State& state) {
  const int64_t phase = state.range(0), k = state.range(1), n = state.range(2), rows = state.range(3);
  if (skip_without(state, QuantIsa::kAmx)) return;
  std::vector<float> x(static_cast<size_t>(rows * k));
  uint32_t seed = 1;
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / (1 << 23);
  }
  const std::vector<uint8_t> weight = random_bytes(static_cast<size_t>(n * k), 2);
  std::vector<float> scales(n, 0.004f), out(rows * n);
  std::vector<uint8_t> split(split_rows_int8_amx_bytes(rows, k) + 64);
  std::vector<uint8_t> panel(linear_int8_amx_panel_bytes(k) + 64);
  auto aligned = [](std::vector<uint8_t>& v) {
    return v.data() + (64 - reinterpret_cast<uintptr_t>(v.data()) % 64) % 64;
  };
  RowsInt8Amx call{};
  call.split = aligned(split);
  call.rows = rows;
  call.weight = reinterpret_cast<const int8_t*>(weight.data());
  call.scales = scales.data();
  call.k = k;
  call.n = n;
  call.out = out.data();
  split_rows_int8_amx(x.data(), rows, k, aligned(split));
  for (auto _ : state) {
    if (phase != 1) split_rows_int8_amx(x.data(), rows, k, aligned(split));
    if (phase != 0) linear_int8_amx_columns(call, aligned(panel), 0, n);
    benchmark::ClobberMemory();
  }
  report(state, QuantIsa::kAmx, phase == 0 ? rows * k : rows * n * k);
}
BENCHMARK(BM_int8_amx_phase)
    ->ArgsProduct({{0, 1, 2}, {288}, {288, 768}, {16, 128}})
    ->Args({0, 768, 288, 128})
    ->Args({1, 768, 288, 128})
    ->Args({2, 768, 288, 128})
    ->Args({2, 768, 2048, 128})
    ->Args({2, 2048, 768, 128})
    ->ArgNames({"phase", "K", "N", "rows"})
    ->Unit(benchmark::kMicrosecond)
    ->ComputeStatistics("min", [](const std::vector<double>& v) { return *std::min_element(v.begin(), v.end()); });

// The int8 digit split alone per ISA (0 generic, 1 AVX2, 3 AVX-512): one
// decode row (K = 288, 768) and a prefill block of 16 rows.
void BM_int8_digit_split(benchmark::State& state) {
  const auto isa = static_cast<QuantIsa>(state.range(0));
  const int64_t k = state.range(1), rows = state.range(2);
  if (skip_without(state, isa)) return;
  std::vector<float> x(static_cast<size_t>(rows * k));
  uint32_t seed = 1;
  for (float& v : x) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(static_cast<int32_t>(seed >> 8) - (1 << 23)) / (1 << 23);
  }
  const int64_t row_bytes = (k + 63) / 64 * 64;
  std::vector<int8_t> digits(static_cast<size_t>(kInt8Digits * rows * row_bytes));
  std::vector<int32_t> exponents(static_cast<size_t>(rows));
  const Int8DigitRows out{digits.data(), row_bytes, rows * row_bytes, exponents.data()};
  const SplitInt8DigitsFn split = select_split_int8_digits(isa);
  for (auto _ : state) {
    benchmark::DoNotOptimize(split(x.data(), rows, k, out));
    benchmark::ClobberMemory();
  }
  state.SetLabel(quant_isa_name(isa));
}
BENCHMARK(BM_int8_digit_split)
    ->ArgsProduct({{0, 1, 3}, {288, 768}, {1, 16}})
    ->ArgNames({"isa", "K", "rows"})
    ->Unit(benchmark::kNanosecond);

// Each shape on every x86 ISA in turn, so one run compares them side by side.
void shapes(benchmark::internal::Benchmark* b, bool with_group) {
  struct Shape {
    int64_t k, n, group;
  };
  for (const Shape s : {Shape{288, 768, 32}, Shape{768, 288, 32}, Shape{2048, 2048, 32},
                        Shape{2048, 2048, 128}}) {
    if (!with_group && s.group != 32) continue;
    for (const int64_t rows : {1, 16, 64, 128}) {
      for (const int64_t isa : {1, 2, 3, 4}) {
        if (isa == 4 && rows == 1) continue;  // AMX: prefill only.
        if (with_group) {
          b->Args({isa, s.k, s.n, rows, s.group});
        } else {
          b->Args({isa, s.k, s.n, rows});
        }
      }
    }
  }
  b->ArgNames(with_group ? std::vector<std::string>{"isa", "K", "N", "rows", "group"}
                         : std::vector<std::string>{"isa", "K", "N", "rows"});
  b->Unit(benchmark::kMicrosecond);
}
BENCHMARK(BM_isa_8da4w)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, true); });
BENCHMARK(BM_isa_qs8)->Apply([](benchmark::internal::Benchmark* b) { shapes(b, false); });

}  // namespace
}  // namespace torchlight::quantized

BENCHMARK_MAIN();
