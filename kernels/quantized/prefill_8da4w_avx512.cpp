// AVX-512 forms of linear_8da4w's prefill conversions (prefill_8da4w.h,
// prefill_8da4w_x86_impl.h): the AVX2 forms' steps in twice the lanes.
// This file alone is built with -mavx512f (no FMA contraction) and only
// runs where quant_isa() allows AVX-512.
#include "kernels/quantized/prefill_8da4w_x86_impl.h"

namespace torchlight::quantized {

void dequantize_int4_rows_avx512(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  dequantize_int4_rows_x86(weights, n_begin, n_end, out);
}

void quantize_dequantize_token_avx512(const float* x, int64_t k, double scale, int64_t zero_point,
                                      float* out) {
  const int64_t done = quantize_dequantize_token_x86(x, k, scale, zero_point, out);
  if (done < k) quantize_dequantize_token_avx2(x + done, k - done, scale, zero_point, out + done);
}

}  // namespace torchlight::quantized
