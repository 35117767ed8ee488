// The machine's AVX2 FMA peak on one core: 12 independent chains of fused
// multiply-adds (enough to cover latency x two FMA ports on Intel and
// AMD Zen), nothing else. Compiled with -mavx2 -mfma; called only when
// the CPU has both.
#include <immintrin.h>

#include <cstdint>

namespace torchlight::bench {

/// Runs `iterations` rounds of 12 vector FMAs (192 flops per round) and
/// returns a value derived from the result, so nothing is optimized away.
float avx2_fma_loop(int64_t iterations) {
  constexpr int kChains = 12;
  __m256 acc[kChains];
  for (int i = 0; i < kChains; ++i) acc[i] = _mm256_set1_ps(static_cast<float>(i) * 1e-3f);
  const __m256 a = _mm256_set1_ps(0.999999f);
  const __m256 b = _mm256_set1_ps(1e-7f);
  for (int64_t it = 0; it < iterations; ++it) {
#pragma GCC unroll 12
    for (int i = 0; i < kChains; ++i) acc[i] = _mm256_fmadd_ps(acc[i], a, b);
  }
  __m256 sum = acc[0];
  for (int i = 1; i < kChains; ++i) sum = _mm256_add_ps(sum, acc[i]);
  alignas(32) float lanes[8];
  _mm256_store_ps(lanes, sum);
  return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

}  // namespace torchlight::bench
