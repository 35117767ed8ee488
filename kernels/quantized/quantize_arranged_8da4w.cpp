// The portable quantize_arranged_8da4w and the run-time choice.
#include "kernels/quantized/quantize_arranged_8da4w.h"

#include <algorithm>

#include "kernels/quantized/linear_8da4w.h"
#include "kernels/quantized/per_token_qparams.h"

namespace torchlight::quantized {

void quantize_arranged_8da4w(const float* x, int64_t k, int64_t group, double scale,
                             int32_t zero_point, int8_t* arranged, float* correction) {
  for (int64_t g0 = 0; g0 < k; g0 += group) {
    int32_t sum = 0;
    for (int64_t c0 = g0; c0 < g0 + group; c0 += 32) {
      const int64_t length = std::min<int64_t>(32, g0 + group - c0);
      int8_t q[32];
      quantize_token_int8(x + c0, length, scale, zero_point, q);
      sum += arrange_chunk_8da4w(q, length, arranged + c0);
    }
    correction[g0 / group] = correction_8da4w(sum, zero_point, group);
  }
}

RowRange row_range_f32(const float* x, int64_t n) { return row_range(x, n); }

RowRangeF32Fn select_row_range_f32(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa >= QuantIsa::kAvx512Vnni) return &row_range_f32_avx512;
#endif
  (void)isa;
  return &row_range_f32;
}

QuantizeArranged8da4wFn select_quantize_arranged_8da4w(int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % 32 == 0 && isa >= QuantIsa::kAvx512Vnni) return &quantize_arranged_8da4w_avx512;
#endif
  (void)group;
  (void)isa;
  return &quantize_arranged_8da4w;
}

}  // namespace torchlight::quantized
