// The fused inverted-residual rows on AVX-512F (16 lanes, 32 registers), and
// with the 1x1 layers on gemm's AMX tiles (inverted_residual_amx.inc).
// Compiled with -mavx512f -mfma; called only where the CPU has AVX-512F.
#include <immintrin.h>

#include <algorithm>
#include <cstdint>
#include <cmath>
#include <cstring>

#include "kernels/optimized/fused/inverted_residual_layout.h"
#include "kernels/optimized/gemm/gemm_amx_kernels.h"

namespace torchlight {
namespace optimized {
namespace {

struct Vec {
  using T = __m512;
  static constexpr size_t kLanes = 16;
  static constexpr size_t kMaxVecs = 4;
  // Accumulators + weight vectors + one broadcast within 32 registers.
  static constexpr int pixels(int nv) { return nv <= 2 ? 12 : nv == 3 ? 8 : 6; }
  static T zero() { return _mm512_setzero_ps(); }
  static T load(const float* p) { return _mm512_loadu_ps(p); }
  static void store(float* p, T v) { _mm512_storeu_ps(p, v); }
  static T set1(float f) { return _mm512_set1_ps(f); }
  static T fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T min(T a, T b) { return _mm512_min_ps(a, b); }
  static T max(T a, T b) { return _mm512_max_ps(a, b); }
  static T add(T a, T b) { return _mm512_add_ps(a, b); }
  static __mmask16 mask(size_t n) { return static_cast<__mmask16>((1u << n) - 1u); }
  static T load_n(const float* p, size_t n) { return _mm512_maskz_loadu_ps(mask(n), p); }
  static void store_n(float* p, T v, size_t n) { _mm512_mask_storeu_ps(p, mask(n), v); }
};

}  // namespace

#define TL_INVERTED_RESIDUAL_ROWS inverted_residual_rows_avx512
#include "kernels/optimized/fused/inverted_residual_kernel.inc"
#include "kernels/optimized/fused/inverted_residual_amx.inc"

}  // namespace optimized
}  // namespace torchlight
