// choose_qparams_per_token_asymmetric for one token, shared by its kernel
// and the fused 8da4w linear (which must quantize activations exactly as the
// decomposed graph does).
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "kernels/quantized/quant_common.h"

namespace torchlight::quantized {

/// One token's value range: the smallest and largest values as floats (NaN
/// skipped) and whether any is NaN. The order of a minimum does not matter
/// (a zero's sign is lost by token_qparams_from_range's min_neg/max_pos), so
/// any order of the comparisons gives the same parameters.
struct RowRange {
  float min, max;
  bool any_nan;
};

/// Widens [*mn, *mx] by vector lanes' minima lo[] and maxima hi[]. Internal
/// linkage: per-ISA files built with other flags use it too (a shared inline
/// copy could carry their instructions here).
static inline void widen_by_lanes(const float* lo, const float* hi, int lanes, float* mn, float* mx) {
  for (int j = 0; j < lanes; ++j) {
    *mn = lo[j] < *mn ? lo[j] : *mn;
    *mx = *mx < hi[j] ? hi[j] : *mx;
  }
}

template <typename T>
inline RowRange row_range(const T* x, int64_t n) {
  // In float (the values are floats, so every comparison is the same) with
  // NaN tracked apart; amin/amax propagate NaN.
  float mn_f = static_cast<float>(x[0]), mx_f = mn_f;
  bool any_nan = false;
  int64_t i = 0;
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    // minps(v, m) is v < m ? v : m, the scalar step below.
    if (n >= 4) {
      __m128 lo = _mm_loadu_ps(x), hi = lo, nan = _mm_setzero_ps();
      for (; i + 4 <= n; i += 4) {
        const __m128 v = _mm_loadu_ps(x + i);
        lo = _mm_min_ps(v, lo);
        hi = _mm_max_ps(v, hi);
        nan = _mm_or_ps(nan, _mm_cmpunord_ps(v, v));
      }
      alignas(16) float l[4], h[4];
      _mm_store_ps(l, lo);
      _mm_store_ps(h, hi);
      widen_by_lanes(l, h, 4, &mn_f, &mx_f);
      any_nan = _mm_movemask_ps(nan) != 0;
    }
  }
#endif
  for (; i < n; ++i) {
    const float v = static_cast<float>(x[i]);
    mn_f = v < mn_f ? v : mn_f;
    mx_f = mx_f < v ? v : mx_f;
    any_nan |= v != v;
  }
  return {mn_f, mx_f, any_nan};
}

/// The steps of token_qparams (below) after its scan: the (scale, zero
/// point) of a token whose smallest and largest non-NaN values are mn_f and
/// mx_f (any_nan: some value is NaN), every step rounded to T as torch does.
/// Also for scans written elsewhere (linear_8da4w_amx.cpp,
/// quantize_arranged_8da4w.h).
template <typename T>
inline void token_qparams_from_range(float mn_f, float mx_f, bool any_nan, double* scale_out,
                                     int64_t* zero_point_out) {
  constexpr double kMin = -128, kMax = 127;
  const double eps = 1.1920928955078125e-07;  // torch.finfo(torch.float32).eps
  const double mn = any_nan ? static_cast<double>(NAN) : static_cast<double>(mn_f);
  const double mx = any_nan ? static_cast<double>(NAN) : static_cast<double>(mx_f);
  const double min_neg = mn < 0 || mn != mn ? mn : 0.0;
  const double max_pos = mx > 0 || mx != mx ? mx : 0.0;
  double scale = round_to<T>(round_to<T>(max_pos - min_neg) / (kMax - kMin));
  scale = scale < eps ? eps : scale;
  const double descaled_min = round_to<T>(min_neg / scale);
  const double descaled_max = round_to<T>(max_pos / scale);
  const double from_min_error = round_to<T>(kMin + descaled_min);
  const double from_max_error = round_to<T>(kMax + descaled_max);
  double zero_point = round_to<T>(from_min_error + from_max_error) > 0
                          ? round_to<T>(kMin - descaled_min)
                          : round_to<T>(kMax - descaled_max);
  zero_point = zero_point < kMin ? kMin : (kMax < zero_point ? kMax : zero_point);
  *scale_out = scale;
  *zero_point_out = portable::convert<int64_t>(std::nearbyint(zero_point));
}

template <typename T>
inline void token_qparams_from_range(RowRange range, double* scale_out, int64_t* zero_point_out) {
  token_qparams_from_range<T>(range.min, range.max, range.any_nan, scale_out, zero_point_out);
}

/// torch's _choose_qparams_per_token_asymmetric_impl on n values of T.
template <typename T>
inline void token_qparams(const T* x, int64_t n, double* scale_out, int64_t* zero_point_out) {
  token_qparams_from_range<T>(row_range(x, n), scale_out, zero_point_out);
}

/// quantize_per_token of n floats with a float64 scale: round(x * (1 / scale)
/// + zero_point) in double, clamped to int8.
inline void quantize_token_int8(const float* x, int64_t n, double scale, int64_t zero_point,
                                int8_t* out) {
  const double inv = 1.0 / scale;
  const double zp = static_cast<double>(zero_point);
  // Clamped before rounding (the same result: the bounds are integers), so
  // adding and taking away 1.5 * 2^52 rounds in the current mode as
  // nearbyint does, without a libm call per value (the baseline x86-64 ISA
  // has no rounding instruction). NaN stays NaN and converts to 0.
  const double kRound = 6755399441055744.0;
  int64_t i = 0;
#if defined(__SSE2__)
  // The same steps four at a time in float64 lanes (maxpd(lo, v) and
  // minpd(hi, v) keep NaN, as the scalar clamps do; NaN lanes become 0).
  const __m128d v_inv = _mm_set1_pd(inv), v_zp = _mm_set1_pd(zp);
  const __m128d v_lo = _mm_set1_pd(-128.0), v_hi = _mm_set1_pd(127.0), v_round = _mm_set1_pd(kRound);
  auto step = [&](__m128d v) {
    v = _mm_add_pd(_mm_mul_pd(v, v_inv), v_zp);
    v = _mm_min_pd(v_hi, _mm_max_pd(v_lo, v));
    v = _mm_sub_pd(_mm_add_pd(v, v_round), v_round);
    return _mm_cvtpd_epi32(_mm_and_pd(v, _mm_cmpord_pd(v, v)));
  };
  for (; i + 4 <= n; i += 4) {
    const __m128 v = _mm_loadu_ps(x + i);
    const __m128i q = _mm_unpacklo_epi64(step(_mm_cvtps_pd(v)), step(_mm_cvtps_pd(_mm_movehl_ps(v, v))));
    const __m128i bytes = _mm_packs_epi16(_mm_packs_epi32(q, q), _mm_setzero_si128());
    const int32_t four = _mm_cvtsi128_si32(bytes);
    std::memcpy(out + i, &four, sizeof(four));
  }
#endif
  for (; i < n; ++i) {
    double v = static_cast<double>(x[i]) * inv + zp;
    v = v < -128.0 ? -128.0 : v;
    v = 127.0 < v ? 127.0 : v;
    out[i] = portable::convert<int8_t>((v + kRound) - kRound);
  }
}

}  // namespace torchlight::quantized
