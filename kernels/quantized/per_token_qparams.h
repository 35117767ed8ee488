// choose_qparams_per_token_asymmetric for one token, shared by its kernel
// and the fused 8da4w linear (which must quantize activations exactly as the
// decomposed graph does).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/quantized/quant_common.h"

namespace torchlight::quantized {

// One token's (scale, zero point), every step rounded to T as torch does.
/// torch's _choose_qparams_per_token_asymmetric_impl on n values of T.
template <typename T>
inline void token_qparams(const T* x, int64_t n, double* scale_out, int64_t* zero_point_out) {
  constexpr double kMin = -128, kMax = 127;
  const double eps = 1.1920928955078125e-07;  // torch.finfo(torch.float32).eps
  double mn = static_cast<float>(x[0]), mx = mn;
  for (int64_t i = 0; i < n; ++i) {
    const double v = static_cast<float>(x[i]);
    mn = (v < mn || v != v) ? v : mn;  // amin/amax propagate NaN.
    mx = (mx < v || v != v) ? v : mx;
  }
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
  for (int64_t i = 0; i < n; ++i) {
    double v = static_cast<double>(x[i]) * inv + zp;
    v = v < -128.0 ? -128.0 : v;
    v = 127.0 < v ? 127.0 : v;
    out[i] = portable::convert<int8_t>((v + kRound) - kRound);
  }
}

}  // namespace torchlight::quantized
