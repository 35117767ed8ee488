// The fused inverted-residual rows on AVX2 + FMA (8 lanes, 16 registers).
// Compiled with -mavx2 -mfma; called only where the CPU has both.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "kernels/optimized/fused/inverted_residual_layout.h"

namespace torchlight {
namespace optimized {
namespace {

struct Vec {
  using T = __m256;
  static constexpr size_t kLanes = 8;
  static constexpr size_t kMaxVecs = 2;
  // Accumulators + weight vectors + one broadcast within 16 registers.
  static constexpr int pixels(int nv) { return nv == 1 ? 8 : 6; }
  static T zero() { return _mm256_setzero_ps(); }
  static T load(const float* p) { return _mm256_loadu_ps(p); }
  static void store(float* p, T v) { _mm256_storeu_ps(p, v); }
  static T set1(float f) { return _mm256_set1_ps(f); }
  static T fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T min(T a, T b) { return _mm256_min_ps(a, b); }
  static T max(T a, T b) { return _mm256_max_ps(a, b); }
  static T add(T a, T b) { return _mm256_add_ps(a, b); }
  static __m256i mask(size_t n) {
    const __m256i lane = _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7);
    return _mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(n)), lane);
  }
  static T load_n(const float* p, size_t n) { return _mm256_maskload_ps(p, mask(n)); }
  static void store_n(float* p, T v, size_t n) { _mm256_maskstore_ps(p, mask(n), v); }
};

}  // namespace

#define TL_INVERTED_RESIDUAL_ROWS inverted_residual_rows_avx2
#include "kernels/optimized/fused/inverted_residual_kernel.inc"

}  // namespace optimized
}  // namespace torchlight
