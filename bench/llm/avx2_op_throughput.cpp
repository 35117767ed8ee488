// Throughput of the AVX2 instructions an int8-weight dot product can be
// built from, one at a time: what bounds linear_int8's decode loop
// (linear_int8_x86_impl.h: vpmovsxbd + vcvtdq2ps + vfmadd231ps per 8
// weights) on a given core, and whether another conversion could be faster.
// Each benchmark runs six independent 256-bit instructions (or conversions
// of 8 weights, or whole dot-product steps of 8 weights) of one kind per
// iteration; the counter sec_per_op is the CPU time of one of them (an
// instruction that one 128-bit pipe runs in two halves shows as about twice
// one that two pipes share).
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

template <class V>
TL_AVX2 inline void opaque_six(V& a0, V& a1, V& a2, V& a3, V& a4, V& a5) {
  TL_OPAQUE(a0);
  TL_OPAQUE(a1);
  TL_OPAQUE(a2);
  TL_OPAQUE(a3);
  TL_OPAQUE(a4);
  TL_OPAQUE(a5);
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
      opaque_six(r0, r1, r2, r3, r4, r5);
      opaque_six(a0, a1, a2, a3, a4, a5);
    }
  }
  set_sec_per_op(state, kInner * 6);
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
      opaque_six(a0, a1, a2, a3, a4, a5);
    }
  }
  opaque_six(c0, c1, c2, c3, c4, c5);
  set_sec_per_op(state, kInner * 6);
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

}  // namespace

BENCHMARK_MAIN();
