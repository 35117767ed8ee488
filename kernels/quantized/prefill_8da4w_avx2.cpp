// AVX2 forms of linear_8da4w's prefill conversions (prefill_8da4w.h,
// prefill_8da4w_x86_impl.h); this file alone is built with -mavx2 and only
// runs when the CPU has it.
#include "kernels/quantized/prefill_8da4w_x86_impl.h"

namespace torchlight::quantized {

void dequantize_int4_rows_avx2(const void* weights, int64_t n_begin, int64_t n_end, float* out) {
  dequantize_int4_rows_x86(weights, n_begin, n_end, out);
}

void quantize_dequantize_token_avx2(const float* x, int64_t k, double scale, int64_t zero_point,
                                    float* out) {
  const int64_t done = quantize_dequantize_token_x86(x, k, scale, zero_point, out);
  if (done < k) quantize_dequantize_token_generic(x + done, k - done, scale, zero_point, out + done);
}

}  // namespace torchlight::quantized
