// Portable forms of linear_8da4w's prefill conversions (prefill_8da4w.h),
// and the run-time choice.
#include <algorithm>

#include "kernels/quantized/per_token_qparams.h"
#include "kernels/quantized/prefill_8da4w.h"
#include "kernels/quantized/quant_isa.h"

namespace torchlight::quantized {

void dequantize_int4_rows_generic(const void* weights, int64_t n_begin, int64_t n_end,
                                  float* out) {
  const Int4Weights& w = *static_cast<const Int4Weights*>(weights);
  const int64_t groups = w.k / w.group;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* row = w.packed + n * (w.k / 2);
    float* dst = out + (n - n_begin) * w.k;
    for (int64_t g = 0; g < groups; ++g) {
      const float scale = w.scales[n * groups + g];
      const int64_t j0 = g * w.group / 2;
      for (int64_t j = j0; j < j0 + w.group / 2; ++j) {
        dst[2 * j] = static_cast<float>((row[j] >> 4) - 8) * scale;
        dst[2 * j + 1] = static_cast<float>((row[j] & 0x0F) - 8) * scale;
      }
    }
  }
}

void quantize_dequantize_token_generic(const float* x, int64_t k, double scale,
                                       int64_t zero_point, float* out) {
  const float scale_f = static_cast<float>(scale);
  const int32_t zp = static_cast<int32_t>(zero_point);
  for (int64_t c0 = 0; c0 < k; c0 += 32) {
    const int64_t length = std::min<int64_t>(32, k - c0);
    int8_t q[32];
    quantize_token_int8(x + c0, length, scale, zero_point, q);
    for (int64_t i = 0; i < length; ++i) out[c0 + i] = static_cast<float>(q[i] - zp) * scale_f;
  }
}

DequantizeInt4RowsFn select_dequantize_int4_rows(int64_t group) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % 32 == 0 && quant_isa() >= QuantIsa::kAvx512Vnni) return &dequantize_int4_rows_avx512;
  if (group % 32 == 0 && __builtin_cpu_supports("avx2")) return &dequantize_int4_rows_avx2;
#endif
  (void)group;
  return &dequantize_int4_rows_generic;
}

QuantizeDequantizeTokenFn select_quantize_dequantize_token() {
#if defined(__x86_64__) || defined(_M_X64)
  if (quant_isa() >= QuantIsa::kAvx512Vnni) return &quantize_dequantize_token_avx512;
  if (__builtin_cpu_supports("avx2")) return &quantize_dequantize_token_avx2;
#endif
  return &quantize_dequantize_token_generic;
}

}  // namespace torchlight::quantized
