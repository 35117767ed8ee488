// Throughput of the AVX2 instructions an int8-weight dot product can be
// built from, one at a time: what bounds linear_int8's decode loop
// (linear_int8_x86_impl.h: vpmovsxbd + vcvtdq2ps + vfmadd231ps per 8
// weights) on a given core, and whether another conversion could be faster.
// Each benchmark runs six independent 256-bit instructions (or conversions
// of 8 weights, or whole dot-product steps of 8 weights) of one kind per
// iteration; the counter sec_per_op is the CPU time of one of them (an
// instruction that one 128-bit pipe runs in two halves shows as about twice
// one that two pipes share). The last three compare whole loops per 8
// weights: two int16 digits of the activations against the int8 weights
// (exact int32 sums, no float convert; what linear_int8_int16_digits.h
// runs), in registers and from L1 with four columns a step, against the
// float step from L1 the same way, and mixes of both (not faster). Pairs of
// two kinds of instruction, three of each a step, show which ones share a
// pipe (a pair costing one of them runs on separate pipes).
//
//   ./torchlight exec build/release/bench/llm/torchlight_avx2_op_throughput
//
// Skipped (an error) on CPUs without AVX2 + FMA + F16C.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include <cstdint>

namespace {

// Keeps a value in a register and makes the compiler treat it as changed, so
// six calls on six inputs stay six instructions (no hoisting, no merging).
#define TL_OPAQUE(v) __asm__ volatile("" : "+x"(v))
// Every function touching vectors: the file builds without -mavx2.
#define TL_AVX2 __attribute__((target("avx2,fma,f16c")))

bool cpu_has_avx2_fma_f16c() {
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma") &&
         __builtin_cpu_supports("f16c");
}

// Inputs: any values that are ordinary numbers for every reading (bytes 3
// and 60, the float16 1.003, the float 3).
TL_AVX2 void initial(__m128i* v) { *v = _mm_set1_epi16(0x3c03); }
TL_AVX2 void initial(__m256i* v) { *v = _mm256_set1_epi16(0x3c03); }
TL_AVX2 void initial(__m256* v) { *v = _mm256_set1_ps(3.0f); }

// The instruction under test, on its own kind of input.
#define TL_OP(Name, InType, expr)                  \
  struct Name {                                    \
    using In = InType;                             \
    TL_AVX2 static auto op(In a) { return expr; }  \
  }
TL_OP(CvtDq2Ps, __m256i, _mm256_cvtepi32_ps(a));
TL_OP(PmovSxBd, __m128i, _mm256_cvtepi8_epi32(a));
TL_OP(PmovSxBw, __m128i, _mm256_cvtepi8_epi16(a));
TL_OP(CvtPh2Ps, __m128i, _mm256_cvtph_ps(a));
TL_OP(PmaddWd, __m256i, _mm256_madd_epi16(a, a));
TL_OP(PmaddUbsw, __m256i, _mm256_maddubs_epi16(a, a));
TL_OP(Pshufb, __m256i, _mm256_shuffle_epi8(a, a));
TL_OP(Paddd, __m256i, _mm256_add_epi32(a, a));
TL_OP(SubPs, __m256, _mm256_sub_ps(a, a));
TL_OP(FmaPs, __m256, _mm256_fmadd_ps(a, a, a));

// 8 int8 weights to exact floats as linear_int8 does (sign extend, convert),
// and by the float bits of 2^23 + (w + 128) less 2^23 + 128 (no convert).
struct WeightsByConvert {
  using In = __m128i;
  TL_AVX2 static __m256 op(In a) {
    return _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(a));
  }
};
struct WeightsByMagic {
  using In = __m128i;
  TL_AVX2 static __m256 op(In a) {
    const __m256i biased = _mm256_add_epi32(_mm256_cvtepi8_epi32(a), _mm256_set1_epi32(0x4B000080));
    return _mm256_sub_ps(_mm256_castsi256_ps(biased), _mm256_set1_ps(8388736.0f));
  }
};

// 8 int8 weights as w * 2^24, exact, by one in-lane shuffle of each weight
// into a 32-bit lane's top byte and the convert: no sign extension. (Here
// every lane takes the same byte: the cost, not the values, is measured.)
struct WeightsByShuffleConvert {
  using In = __m256i;
  TL_AVX2 static __m256 op(In a) {
    return _mm256_cvtepi32_ps(_mm256_shuffle_epi8(a, _mm256_set1_epi32(0x0C808080)));
  }
};

// 32 int8 weights against 32 int8 activations as one float vector of 8
// partial sums, the way llama.cpp's q8_0 dot product works on AVX2 (an
// algorithm, written here from its description): |w| as unsigned bytes,
// the activations given w's signs, byte products summed in pairs to int16,
// pairs of those to int32, converted. Its dot step (with the FMA by the two
// blocks' scales) covers 32 weights where linear_int8's covers 8.
struct Int8ByInt8Bytes {
  using In = __m256i;
  TL_AVX2 static __m256 op(In a) {
    const __m256i act = _mm256_alignr_epi8(a, a, 1);  // Any other bytes.
    const __m256i pairs = _mm256_maddubs_epi16(_mm256_sign_epi8(a, a), _mm256_sign_epi8(act, a));
    return _mm256_cvtepi32_ps(_mm256_madd_epi16(pairs, _mm256_set1_epi16(1)));
  }
};

// Every vector in registers and seen as changed (TL_OPAQUE on each).
template <class V>
TL_AVX2 inline void opaque_one(V& v) {
  TL_OPAQUE(v);
}
template <class... V>
TL_AVX2 inline void opaque_all(V&... v) {
  (opaque_one(v), ...);
}

void set_sec_per_op(benchmark::State& state, int64_t ops_per_iteration) {
  state.counters["sec_per_op"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * ops_per_iteration,
                         benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
}

template <class Op>
TL_AVX2 void run_six(benchmark::State& state) {
  typename Op::In a0;
  initial(&a0);
  typename Op::In a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  constexpr int kInner = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      auto r0 = Op::op(a0);
      auto r1 = Op::op(a1);
      auto r2 = Op::op(a2);
      auto r3 = Op::op(a3);
      auto r4 = Op::op(a4);
      auto r5 = Op::op(a5);
      opaque_all(r0, r1, r2, r3, r4, r5);
      opaque_all(a0, a1, a2, a3, a4, a5);
    }
  }
  set_sec_per_op(state, kInner * 6);
}

// Three of OpA and three of OpB a step, independent (sec_per_op: per pair;
// three, not six, so the twelve live vectors stay in registers).
template <class OpA, class OpB>
TL_AVX2 void run_three_pairs(benchmark::State& state) {
  typename OpA::In a0;
  typename OpB::In b0;
  initial(&a0);
  initial(&b0);
  typename OpA::In a1 = a0, a2 = a0;
  typename OpB::In b1 = b0, b2 = b0;
  constexpr int kInner = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      auto r0 = OpA::op(a0);
      auto s0 = OpB::op(b0);
      auto r1 = OpA::op(a1);
      auto s1 = OpB::op(b1);
      auto r2 = OpA::op(a2);
      auto s2 = OpB::op(b2);
      opaque_all(r0, r1, r2, s0, s1, s2, a0, a1, a2, b0, b1, b2);
    }
  }
  set_sec_per_op(state, kInner * 3);
}

// The dot product's step: six accumulators, each += x * Op(weights), as
// linear_int8's loop does per 8 weights (sec_per_op: per 8 weights).
template <class Op>
TL_AVX2 void run_six_dot(benchmark::State& state) {
  typename Op::In a0;
  initial(&a0);
  typename Op::In a1 = a0, a2 = a0, a3 = a0, a4 = a0, a5 = a0;
  const __m256 x = _mm256_set1_ps(1e-9f);
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0;
  constexpr int kInner = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      c0 = _mm256_fmadd_ps(x, Op::op(a0), c0);
      c1 = _mm256_fmadd_ps(x, Op::op(a1), c1);
      c2 = _mm256_fmadd_ps(x, Op::op(a2), c2);
      c3 = _mm256_fmadd_ps(x, Op::op(a3), c3);
      c4 = _mm256_fmadd_ps(x, Op::op(a4), c4);
      c5 = _mm256_fmadd_ps(x, Op::op(a5), c5);
      opaque_all(a0, a1, a2, a3, a4, a5);
    }
  }
  opaque_all(c0, c1, c2, c3, c4, c5);
  set_sec_per_op(state, kInner * 6);
}

// Two int16 digits of the activations (hi, lo) against 16 int8 weights, as
// an exact int32 dot product: one vpmovsxbw, a vpmaddwd and a vpaddd per
// digit (what a decode loop without float converts would run per 16
// weights). Three independent streams, each with its two accumulators
// (sec_per_op: per 8 weights).
TL_AVX2 void run_int16_digit_dot(benchmark::State& state) {
  __m128i w0, w1, w2;
  initial(&w0);
  w1 = w0;
  w2 = w0;
  const __m256i hi = _mm256_set1_epi16(1234), lo = _mm256_set1_epi16(-4321);
  __m256i h0 = _mm256_setzero_si256(), h1 = h0, h2 = h0, l0 = h0, l1 = h0, l2 = h0;
  constexpr int kInner = 1000;
  for (auto _ : state) {
    for (int i = 0; i < kInner; ++i) {
      const __m256i v0 = _mm256_cvtepi8_epi16(w0);
      const __m256i v1 = _mm256_cvtepi8_epi16(w1);
      const __m256i v2 = _mm256_cvtepi8_epi16(w2);
      h0 = _mm256_add_epi32(h0, _mm256_madd_epi16(v0, hi));
      l0 = _mm256_add_epi32(l0, _mm256_madd_epi16(v0, lo));
      h1 = _mm256_add_epi32(h1, _mm256_madd_epi16(v1, hi));
      l1 = _mm256_add_epi32(l1, _mm256_madd_epi16(v1, lo));
      h2 = _mm256_add_epi32(h2, _mm256_madd_epi16(v2, hi));
      l2 = _mm256_add_epi32(l2, _mm256_madd_epi16(v2, lo));
      TL_OPAQUE(w0);
      TL_OPAQUE(w1);
      TL_OPAQUE(w2);
    }
  }
  opaque_all(h0, h1, h2, l0, l1, l2);
  set_sec_per_op(state, kInner * 3 * 2);
}

// The same two ways from memory in L1, four columns a step sharing each
// activation load, as a decode loop would run them over K = 512: the float
// step (vpmovsxbd + vcvtdq2ps + vfmadd per 8 weights and column) and the
// int16 digits (per 16 weights and column: vpmovsxbw, 2 vpmaddwd, 2 vpaddd).
// sec_per_op: per 8 weights of one column.
constexpr int kMemK = 512;
constexpr int kMemColumns = 4;

// The loops' operands in L1: both digits, the float row, four columns' weights.
struct L1Operands {
  alignas(64) int16_t hi[kMemK];
  alignas(64) int16_t lo[kMemK];
  alignas(64) float x[kMemK];
  alignas(64) int8_t w[kMemColumns][kMemK];
  L1Operands() {
    for (int k = 0; k < kMemK; ++k) {
      hi[k] = static_cast<int16_t>(k * 31 - 7000);
      lo[k] = static_cast<int16_t>(k * 63);
      x[k] = 1e-3f * static_cast<float>(k % 7);
    }
    for (auto& column : w) for (int k = 0; k < kMemK; ++k) column[k] = static_cast<int8_t>(k * 37);
  }
};

const L1Operands& l1_operands() {
  static const L1Operands operands;
  return operands;
}

TL_AVX2 void run_float_columns(benchmark::State& state) {
  const L1Operands& in = l1_operands();
  for (auto _ : state) {
    __m256 a[kMemColumns][2];
    for (auto& c : a) c[0] = c[1] = _mm256_setzero_ps();
    for (int k = 0; k < kMemK; k += 16) {
      const __m256 x0 = _mm256_load_ps(in.x + k), x1 = _mm256_load_ps(in.x + k + 8);
      for (int c = 0; c < kMemColumns; ++c) {
        a[c][0] = _mm256_fmadd_ps(x0, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in.w[c] + k)))), a[c][0]);
        a[c][1] = _mm256_fmadd_ps(x1, _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(
                                          _mm_loadl_epi64(reinterpret_cast<const __m128i*>(in.w[c] + k + 8)))), a[c][1]);
      }
    }
    for (auto& c : a) benchmark::DoNotOptimize(_mm256_add_ps(c[0], c[1]));
  }
  set_sec_per_op(state, kMemColumns * kMemK / 8);
}

// One step of 16 weights of one column: both digits' products added. The
// adds are written as asm so they happen in place: GCC 14 otherwise adds
// into the product's register and moves it back (a vmovdqa per add, 8 in
// the loop; measured 0.88-0.98 ns per 8 weights against 0.82).
TL_AVX2 inline void int16_digit_step(const int8_t* w, __m256i h, __m256i l, __m256i& acc_h, __m256i& acc_l) {
  const __m256i v = _mm256_cvtepi8_epi16(_mm_load_si128(reinterpret_cast<const __m128i*>(w)));
  const __m256i ph = _mm256_madd_epi16(v, h), pl = _mm256_madd_epi16(v, l);
  __asm__("vpaddd %1, %0, %0" : "+x"(acc_h) : "x"(ph));
  __asm__("vpaddd %1, %0, %0" : "+x"(acc_l) : "x"(pl));
}

// One step of 16 weights of one column the float way (linear_int8's float
// loop: sign extension, convert and fused multiply-add per 8 weights).
TL_AVX2 inline void float_step(const int8_t* w, const float* x, __m256& acc0, __m256& acc1) {
  const auto* w0 = reinterpret_cast<const __m128i*>(w);
  const auto* w8 = reinterpret_cast<const __m128i*>(w + 8);
  acc0 = _mm256_fmadd_ps(_mm256_load_ps(x), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(w0))), acc0);
  acc1 = _mm256_fmadd_ps(_mm256_load_ps(x + 8), _mm256_cvtepi32_ps(_mm256_cvtepi8_epi32(_mm_loadl_epi64(w8))), acc1);
}

// Four columns over K = kMemK by int16 digits, their sums stored (a
// kernel's shape: GCC keeps the eight accumulators in place only when they
// start and end here); the last kFloatColumns columns (1: the fourth, 2:
// the third and fourth) take the float step instead, so its convert and
// fused multiply-add might run on pipes the digits' vpmaddwd leaves idle.
template <int kFloatColumns>
TL_AVX2 __attribute__((noinline)) void l1_columns(const L1Operands& in, __m256i* sums, __m256* float_sums) {
  __m256i h0 = _mm256_setzero_si256(), h1 = h0, h2 = h0, h3 = h0, l0 = h0, l1 = h0, l2 = h0, l3 = h0;
  __m256 f0 = _mm256_setzero_ps(), f1 = f0, g0 = f0, g1 = f0;
  for (int k = 0; k < kMemK; k += 16) {
    const __m256i h = _mm256_load_si256(reinterpret_cast<const __m256i*>(in.hi + k));
    const __m256i l = _mm256_load_si256(reinterpret_cast<const __m256i*>(in.lo + k));
    int16_digit_step(in.w[0] + k, h, l, h0, l0);
    int16_digit_step(in.w[1] + k, h, l, h1, l1);
    if constexpr (kFloatColumns >= 2) {
      float_step(in.w[2] + k, in.x + k, g0, g1);
    } else {
      int16_digit_step(in.w[2] + k, h, l, h2, l2);
    }
    if constexpr (kFloatColumns >= 1) {
      float_step(in.w[3] + k, in.x + k, f0, f1);
    } else {
      int16_digit_step(in.w[3] + k, h, l, h3, l3);
    }
  }
  sums[0] = _mm256_add_epi32(h0, l0);
  sums[1] = _mm256_add_epi32(h1, l1);
  sums[2] = _mm256_add_epi32(h2, l2);
  sums[3] = _mm256_add_epi32(h3, l3);
  float_sums[0] = _mm256_add_ps(f0, f1);
  float_sums[1] = _mm256_add_ps(g0, g1);
}

template <int kFloatColumns>
TL_AVX2 void run_l1_columns(benchmark::State& state) {
  const L1Operands& in = l1_operands();
  __m256i sums[kMemColumns];
  __m256 float_sums[2];
  for (auto _ : state) {
    l1_columns<kFloatColumns>(in, sums, float_sums);
    benchmark::DoNotOptimize(sums);
    benchmark::DoNotOptimize(float_sums);
  }
  set_sec_per_op(state, kMemColumns * kMemK / 8);
}

template <void (*kRun)(benchmark::State&)>
void BM_run(benchmark::State& state) {
  if (!cpu_has_avx2_fma_f16c()) {
    state.SkipWithError("this CPU lacks AVX2 + FMA + F16C");
    return;
  }
  kRun(state);
}

// Checks the CPU first, in code built without AVX2.
template <class Op, bool kDot>
void BM_op(benchmark::State& state) {
  if (!cpu_has_avx2_fma_f16c()) {
    state.SkipWithError("this CPU lacks AVX2 + FMA + F16C");
    return;
  }
  if constexpr (kDot) {
    run_six_dot<Op>(state);
  } else {
    run_six<Op>(state);
  }
}

BENCHMARK(BM_op<CvtDq2Ps, false>)->Name("vcvtdq2ps");
BENCHMARK(BM_op<PmovSxBd, false>)->Name("vpmovsxbd");
BENCHMARK(BM_op<CvtPh2Ps, false>)->Name("vcvtph2ps");
BENCHMARK(BM_op<PmaddWd, false>)->Name("vpmaddwd");
BENCHMARK(BM_op<PmaddUbsw, false>)->Name("vpmaddubsw");
BENCHMARK(BM_op<Pshufb, false>)->Name("vpshufb");
BENCHMARK(BM_op<Paddd, false>)->Name("vpaddd");
BENCHMARK(BM_op<SubPs, false>)->Name("vsubps");
BENCHMARK(BM_op<FmaPs, false>)->Name("vfmadd (independent)");
BENCHMARK(BM_op<WeightsByConvert, false>)->Name("8 weights: vpmovsxbd + vcvtdq2ps");
BENCHMARK(BM_op<WeightsByMagic, false>)->Name("8 weights: vpmovsxbd + vpaddd + vsubps");
BENCHMARK(BM_op<WeightsByShuffleConvert, false>)->Name("8 weights: vpshufb + vcvtdq2ps");
// With the fused multiply-add into six accumulators: the loop's whole step.
BENCHMARK(BM_op<WeightsByConvert, true>)->Name("dot step: vpmovsxbd + vcvtdq2ps + vfmadd");
BENCHMARK(BM_op<WeightsByMagic, true>)->Name("dot step: vpmovsxbd + vpaddd + vsubps + vfmadd");
BENCHMARK(BM_op<WeightsByShuffleConvert, true>)->Name("dot step: vpshufb + vcvtdq2ps + vfmadd");
BENCHMARK(BM_op<Int8ByInt8Bytes, true>)->Name("dot step of 32: int8 x int8 bytes (q8_0's way)");
BENCHMARK(BM_run<run_int16_digit_dot>)->Name("dot step of 16: vpmovsxbw + 2 vpmaddwd + 2 vpaddd (per 8)");
// From L1, four columns sharing each activation load (per 8 weights and column).
BENCHMARK(BM_run<run_float_columns>)->Name("4 columns from L1: float step (per 8)");
BENCHMARK(BM_run<run_l1_columns<0>>)->Name("4 columns from L1: int16 digits (per 8)");
BENCHMARK(BM_run<run_l1_columns<1>>)->Name("4 columns from L1: 3 by int16 digits, 1 by the float step (per 8)");
BENCHMARK(BM_run<run_l1_columns<2>>)->Name("4 columns from L1: 2 by int16 digits, 2 by the float step (per 8)");
// Pairs: one instruction of each kind per pair (sec_per_op: per pair).
BENCHMARK(BM_run<run_three_pairs<PmaddWd, CvtDq2Ps>>)->Name("pair: vpmaddwd + vcvtdq2ps");
BENCHMARK(BM_run<run_three_pairs<PmaddWd, FmaPs>>)->Name("pair: vpmaddwd + vfmadd");
BENCHMARK(BM_run<run_three_pairs<PmaddWd, PmovSxBw>>)->Name("pair: vpmaddwd + vpmovsxbw");
BENCHMARK(BM_run<run_three_pairs<PmaddWd, PmovSxBd>>)->Name("pair: vpmaddwd + vpmovsxbd");
BENCHMARK(BM_run<run_three_pairs<CvtDq2Ps, FmaPs>>)->Name("pair: vcvtdq2ps + vfmadd");
BENCHMARK(BM_run<run_three_pairs<CvtDq2Ps, PmovSxBd>>)->Name("pair: vcvtdq2ps + vpmovsxbd");
BENCHMARK(BM_run<run_three_pairs<PmovSxBd, PmovSxBw>>)->Name("pair: vpmovsxbd + vpmovsxbw");

}  // namespace

BENCHMARK_MAIN();
