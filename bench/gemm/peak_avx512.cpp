// The machine's AVX-512 FMA peak on one core: 24 independent chains of
// fused multiply-adds (enough to cover latency x two FMA ports), nothing
// else. Compiled with -mavx512f; called only when the CPU has it.
#include <immintrin.h>

#include <cstdint>

namespace torchlight::bench {

/// Runs `iterations` rounds of 24 vector FMAs (768 flops per round) and
/// returns a value derived from the result, so nothing is optimized away.
float avx512_fma_loop(int64_t iterations) {
  constexpr int kChains = 24;
  __m512 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm512_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m512 a = _mm512_set1_ps(0.999999f);
  const __m512 b = _mm512_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 24
    for (int i = 0; i < kChains; ++i) acc[i] = _mm512_fmadd_ps(acc[i], a, b);
  }
  __m512 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm512_add_ps(sum, acc[i]);
  return _mm512_reduce_add_ps(sum);
}

}  // namespace torchlight::bench
