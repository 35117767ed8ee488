// The quantized kernels as a loaded method runs them (prepare once, then
// eval): dequantize/quantize of a 1M-element activation, embedding lookups
// (8-bit and 4-bit, group 128), and a 2048x2048 linear as decode (1 row) and
// prefill (16 rows), on 1 and 2 threads where the kernel threads: float32 aten::linear.out (the optimized GEMM),
// quantized_decomposed::mixed_linear.out (int8 weights), the fused int8 weight-only
// torchlight::linear_int8.out, the fused int4 weight-only torchlight::linear_4w.out (BM_shape_4w),
// the fused pt2e int8 x int8 torchlight::linear_qs8.out, the fused
// torchlight::linear_8da4w.out (int4 weights, group 128), and its two
// instruction-set loops alone on one thread.
//
//   build/release/bench/quantized/torchlight_quantized_bench [--benchmark_min_time=0.2s]
#include <benchmark/benchmark.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/all_kernels.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/quantized/linear_8da4w.h"
#include "bench/quantized/prepared_kernel.h"

namespace torchlight {
namespace {

using bench::PreparedKernel;
using bench::random_ints;
using bench::random_values;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::TestTensor;

void run_loop(benchmark::State& state, PreparedKernel& kernel, int64_t bytes) {
  for (auto _ : state) {
    if (!kernel.run()) state.SkipWithError("kernel failed");
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * bytes);
}

constexpr int64_t kActivation = 1 << 20;

void BM_dequantize_per_tensor_i8_f32(benchmark::State& state) {
  TestTensor in(ScalarType::kChar, {kActivation}, random_ints(kActivation, 1, -128, 128));
  TestTensor out(ScalarType::kFloat, {kActivation});
  KernelArgs args{in.evalue(),          EValue(0.05),         EValue(int64_t{3}),
                  EValue(int64_t{-128}), EValue(int64_t{127}), EValue(int64_t{1}),
                  EValue(),             out.evalue(),         EValue()};
  PreparedKernel k("quantized_decomposed::dequantize_per_tensor.out", args);
  run_loop(state, k, kActivation * 5);
}

void quantize_case(benchmark::State& state, ScalarType q, int64_t qmin, int64_t qmax) {
  TestTensor in(ScalarType::kFloat, {kActivation}, random_values(kActivation, 2, -6, 6));
  TestTensor out(q, {kActivation});
  KernelArgs args{in.evalue(),     EValue(0.05),   EValue(int64_t{3}), EValue(qmin),
                  EValue(qmax),    EValue(static_cast<int64_t>(q)),    out.evalue(),
                  EValue()};
  PreparedKernel k("quantized_decomposed::quantize_per_tensor.out", args);
  run_loop(state, k, kActivation * (4 + static_cast<int64_t>(element_size(q))));
}
void BM_quantize_per_tensor_f32_i8(benchmark::State& state) {
  quantize_case(state, ScalarType::kChar, -128, 127);
}
// int32 takes the nearbyint loop (its range is beyond the exact rounding trick).
void BM_quantize_per_tensor_f32_i32(benchmark::State& state) {
  quantize_case(state, ScalarType::kInt, INT32_MIN, INT32_MAX);
}

void embedding_case(benchmark::State& state, int bits, const char* op) {
  constexpr int64_t kVocab = 8192, kDim = 2048, kGroup = 128, kLookups = 32;
  const int packed = static_cast<int>(kDim * bits / 8);
  TestTensor weight(ScalarType::kByte, {kVocab, packed});
  std::memset(weight.tensor().mutable_data_ptr<uint8_t>(), 0x5a, kVocab * packed);
  TestTensor scales(ScalarType::kFloat, {kVocab, kDim / kGroup},
                    random_values(kVocab * kDim / kGroup, 3, 0.01, 0.1));
  TestTensor indices(ScalarType::kLong, {kLookups}, random_ints(kLookups, 4, 0, kVocab));
  TestTensor out(ScalarType::kFloat, {kLookups, kDim});
  const int64_t qmin = bits == 8 ? -128 : -8, qmax = bits == 8 ? 127 : 7;
  KernelArgs args{weight.evalue(), scales.evalue(), EValue(),    EValue(qmin),
                  EValue(qmax),    indices.evalue(), out.evalue(), EValue()};
  PreparedKernel k(op, args);
  run_loop(state, k, kLookups * kDim * 4);
}
void BM_embedding_byte(benchmark::State& state) {
  embedding_case(state, 8, "quantized_decomposed::embedding_byte.out");
}
void BM_embedding_4bit(benchmark::State& state) {
  embedding_case(state, 4, "quantized_decomposed::embedding_4bit.out");
}

constexpr int64_t kK = 2048, kN = 2048, kGroup = 128;

void BM_linear_f32(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  threadpool::set_num_threads(static_cast<size_t>(state.range(1)));
  TestTensor x(ScalarType::kFloat, {m, kK}, random_values(m * kK, 5, -1, 1));
  TestTensor w(ScalarType::kFloat, {kN, kK}, random_values(kN * kK, 6, -0.05, 0.05));
  TestTensor out(ScalarType::kFloat, {m, kN});
  KernelArgs args{x.evalue(), w.evalue(), EValue(), out.evalue(), EValue()};
  PreparedKernel k("aten::linear.out", args);
  run_loop(state, k, kN * kK * 4);
}

void BM_mixed_linear_int8(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  TestTensor x(ScalarType::kFloat, {m, kK}, random_values(m * kK, 5, -1, 1));
  TestTensor w(ScalarType::kChar, {kN, kK}, random_ints(kN * kK, 6, -128, 128));
  TestTensor s(ScalarType::kFloat, {kN}, random_values(kN, 7, 0.001, 0.01));
  TestTensor out(ScalarType::kFloat, {m, kN});
  KernelArgs args{x.evalue(), w.evalue(), s.evalue(), EValue(), EValue(), out.evalue(), EValue()};
  PreparedKernel k("quantized_decomposed::mixed_linear.out", args);
  run_loop(state, k, kN * kK);
}

// The int8 weight-only fused linear (float32 activations): what a pt2e linear
// ran on before linear_qs8, after a dequantize of its int8 input.
void BM_linear_int8(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  threadpool::set_num_threads(static_cast<size_t>(state.range(1)));
  TestTensor x(ScalarType::kFloat, {m, kK}, random_values(m * kK, 5, -1, 1));
  TestTensor w(ScalarType::kChar, {kN, kK}, random_ints(kN * kK, 6, -127, 128));
  TestTensor s(ScalarType::kFloat, {kN}, random_values(kN, 7, 0.001, 0.01));
  TestTensor out(ScalarType::kFloat, {m, kN});
  KernelArgs args{x.evalue(), w.evalue(), s.evalue(), EValue(), out.evalue(), EValue()};
  PreparedKernel k("torchlight::linear_int8.out", args);
  run_loop(state, k, kN * kK);
}

// pt2e's int8 linear fused: int8 activations x int8 weights summed in int32.
void BM_linear_qs8(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  threadpool::set_num_threads(static_cast<size_t>(state.range(1)));
  TestTensor x(ScalarType::kChar, {m, kK}, random_ints(m * kK, 5, -128, 128));
  TestTensor w(ScalarType::kChar, {kN, kK}, random_ints(kN * kK, 6, -127, 128));
  TestTensor s(ScalarType::kFloat, {kN}, random_values(kN, 7, 0.001, 0.01));
  TestTensor out(ScalarType::kFloat, {m, kN});
  KernelArgs args{x.evalue(), EValue(0.02), EValue(int64_t{3}), w.evalue(),
                  s.evalue(), EValue(),     out.evalue(),       EValue()};
  PreparedKernel k("torchlight::linear_qs8.out", args);
  run_loop(state, k, kN * kK);
}

struct Linear8da4wInputs {
  explicit Linear8da4wInputs(int m)
      : x(ScalarType::kFloat, {m, kK}, random_values(m * kK, 5, -1, 1)),
        w(ScalarType::kByte, {kN, kK / 2}, random_ints(kN * kK / 2, 6, 0, 256)),
        s(ScalarType::kFloat, {kN, kK / kGroup}, random_values(kN * kK / kGroup, 7, 0.001, 0.01)),
        out(ScalarType::kFloat, {m, kN}) {}
  TestTensor x, w, s, out;
};

void BM_linear_8da4w(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  threadpool::set_num_threads(static_cast<size_t>(state.range(1)));
  Linear8da4wInputs in(m);
  KernelArgs args{in.x.evalue(), in.w.evalue(), in.s.evalue(), EValue(kGroup),
                  EValue(),      in.out.evalue(), EValue()};
  PreparedKernel k("torchlight::linear_8da4w.out", args);
  run_loop(state, k, kN * kK / 2);
}

// One row's columns on one thread: the loops alone.
void loop_case(benchmark::State& state, quantized::Columns8da4wFn fn) {
  Linear8da4wInputs in(1);
  std::vector<int8_t> xq(kK);
  for (int64_t i = 0; i < kK; ++i) xq[i] = static_cast<int8_t>(i * 37);
  std::vector<float> correction(kK / kGroup, 8.0f);
  quantized::Row8da4w row{};
  row.xq = xq.data();
  row.correction = correction.data();
  row.rows = 1;
  row.zero_point[0] = 3;
  row.scale[0] = 0.01f;
  row.weight = in.w.tensor().const_data_ptr<uint8_t>();
  row.w_scales = in.s.tensor().const_data_ptr<float>();
  row.k = kK;
  row.n = kN;
  row.group = kGroup;
  row.out = in.out.tensor().mutable_data_ptr<float>();
  for (auto _ : state) {
    fn(row, 0, kN);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * kN * kK / 2);
}
void BM_linear_8da4w_loop_generic(benchmark::State& state) {
  loop_case(state, &quantized::linear_8da4w_columns_generic);
}
#if defined(__x86_64__)
void BM_linear_8da4w_loop_avx2(benchmark::State& state) {
  if (!__builtin_cpu_supports("avx2")) {
    state.SkipWithError("no AVX2");
    return;
  }
  loop_case(state, &quantized::linear_8da4w_columns_avx2);
}
BENCHMARK(BM_linear_8da4w_loop_avx2)->Unit(benchmark::kMicrosecond);
#endif

// stories15m's linears (bench/llm --shape stories15m): K x N of 288 x 288
// (attention), 288 x 768 (w1, w3), 768 x 288 (w2), at 128 prompt rows or one
// decode row, and the classifier, 288 x 32000, at one row. Args: K, N, rows, threads (8da4w: group 32, bench/llm's default).
void BM_shape_f32(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1)),
            m = static_cast<int>(state.range(2));
  threadpool::set_num_threads(static_cast<size_t>(state.range(3)));
  TestTensor x(ScalarType::kFloat, {m, k}, random_values(m * k, 5, -1, 1));
  TestTensor w(ScalarType::kFloat, {n, k}, random_values(n * k, 6, -0.05, 0.05));
  TestTensor out(ScalarType::kFloat, {m, n});
  KernelArgs args{x.evalue(), w.evalue(), EValue(), out.evalue(), EValue()};
  PreparedKernel kernel("aten::linear.out", args);
  run_loop(state, kernel, n * k * 4);
}
void BM_shape_int8(benchmark::State& state) {
  const int k = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1)),
            m = static_cast<int>(state.range(2));
  threadpool::set_num_threads(static_cast<size_t>(state.range(3)));
  TestTensor x(ScalarType::kFloat, {m, k}, random_values(m * k, 5, -1, 1));
  TestTensor w(ScalarType::kChar, {n, k}, random_ints(n * k, 6, -127, 128));
  TestTensor s(ScalarType::kFloat, {n}, random_values(n, 7, 0.001, 0.01));
  TestTensor out(ScalarType::kFloat, {m, n});
  KernelArgs args{x.evalue(), w.evalue(), s.evalue(), EValue(), out.evalue(), EValue()};
  PreparedKernel kernel("torchlight::linear_int8.out", args);
  run_loop(state, kernel, n * k);
}
// The int4 group-32 linears (8da4w, 4w) share their arguments and layout.
void run_shape_int4(benchmark::State& state, const char* op) {
  const int k = static_cast<int>(state.range(0)), n = static_cast<int>(state.range(1)),
            m = static_cast<int>(state.range(2)), group = 32;
  threadpool::set_num_threads(static_cast<size_t>(state.range(3)));
  TestTensor x(ScalarType::kFloat, {m, k}, random_values(m * k, 5, -1, 1));
  TestTensor w(ScalarType::kByte, {n, k / 2}, random_ints(n * k / 2, 6, 0, 256));
  TestTensor s(ScalarType::kFloat, {n, k / group}, random_values(n * k / group, 7, 0.001, 0.01));
  TestTensor out(ScalarType::kFloat, {m, n});
  KernelArgs args{x.evalue(), w.evalue(), s.evalue(), EValue(int64_t{group}), EValue(), out.evalue(),
                  EValue()};
  PreparedKernel kernel(op, args, 0b110);  // Weight, scales.
  run_loop(state, kernel, n * k / 2);
}
void BM_shape_8da4w(benchmark::State& state) { run_shape_int4(state, "torchlight::linear_8da4w.out"); }
void BM_shape_4w(benchmark::State& state) { run_shape_int4(state, "torchlight::linear_4w.out"); }
void stories15m_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t rows : {128, 1}) {
    for (int64_t threads : {1, 2}) {
      b->Args({288, 288, rows, threads})->Args({288, 768, rows, threads})
          ->Args({768, 288, rows, threads});
    }
  }
  // The classifier (vocabulary 32000), once per decoded token.
  b->Args({288, 32000, 1, 1})->Args({288, 32000, 1, 2});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
// stories110m's linears (dim 768, hidden 2048) at 128 prompt rows, and a
// short prompt (16 rows) on stories15m's attention shape.
void larger_shapes(benchmark::internal::Benchmark* b) {
  for (int64_t threads : {1, 2}) {
    b->Args({768, 768, 128, threads})->Args({768, 2048, 128, threads})
        ->Args({2048, 768, 128, threads})->Args({288, 288, 16, threads});
  }
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
// Short prompts on stories15m's up projection, one thread: where
// linear_int8's AMX-INT8 tiles start to win (kMinRowsInt8Amx).
void few_rows_int8(benchmark::internal::Benchmark* b) {
  for (int64_t rows : {4, 8, 12, 16, 24, 32, 48}) b->Args({288, 768, rows, 1});
  b->Unit(benchmark::kMicrosecond)->UseRealTime();
}
BENCHMARK(BM_shape_f32)->Apply(stories15m_shapes);
BENCHMARK(BM_shape_int8)->Apply(stories15m_shapes);
BENCHMARK(BM_shape_int8)->Apply(few_rows_int8);
BENCHMARK(BM_shape_int8)->Apply(larger_shapes);
BENCHMARK(BM_shape_8da4w)->Apply(stories15m_shapes);
BENCHMARK(BM_shape_4w)->Apply(stories15m_shapes);
BENCHMARK(BM_shape_8da4w)->Apply(larger_shapes);

BENCHMARK(BM_dequantize_per_tensor_i8_f32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_quantize_per_tensor_f32_i8)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_quantize_per_tensor_f32_i32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_embedding_byte)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_embedding_4bit)->Unit(benchmark::kMicrosecond);
// Args: rows, threads.
BENCHMARK(BM_linear_f32)->Args({1, 1})->Args({16, 1})->Args({1, 2})->Args({16, 2})
    ->Args({63, 1})->Args({64, 1})->Args({128, 1})->Args({128, 2})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_mixed_linear_int8)->Arg(1)->Arg(16)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_linear_int8)->Args({1, 1})->Args({16, 1})->Args({1, 2})->Args({16, 2})
    ->Args({63, 1})->Args({64, 1})->Args({128, 1})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_linear_qs8)->Args({1, 1})->Args({16, 1})->Args({1, 2})->Args({16, 2})
    ->Args({63, 1})->Args({64, 1})->Args({128, 1})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
// 63 rows: the loops; 64 and 128: the dequantized fp32 GEMM for 8da4w groups up to 64
// (kernels/quantized/dequantized_gemm.h).
BENCHMARK(BM_linear_8da4w)->Args({1, 1})->Args({16, 1})->Args({1, 2})->Args({16, 2})
    ->Args({63, 1})->Args({64, 1})->Args({128, 1})->Args({128, 2})
    ->Unit(benchmark::kMicrosecond)->UseRealTime();
BENCHMARK(BM_linear_8da4w_loop_generic)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace torchlight

BENCHMARK_MAIN();
