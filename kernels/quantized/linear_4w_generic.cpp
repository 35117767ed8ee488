// Portable loop of linear_4w (linear_4w.h), and the run-time choice.
// std::fma keeps the sums identical to the x86 loops' fused multiply-adds.
#include <cmath>

#include "kernels/quantized/linear_4w.h"
#include "kernels/quantized/linear_int8.h"

namespace torchlight::quantized {

void linear_4w_columns_generic(const Rows4w& rows, int64_t n_begin, int64_t n_end) {
  const int64_t k = rows.k;
  const int64_t groups = k / rows.group;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* packed = rows.weight + n * (k / 2);
    const float* scales = rows.w_scales + n * groups;
    for (int r = 0; r < rows.rows; ++r) {
      const float* x = rows.x + r * k;
      float lane[kLanes4w] = {};
      for (int64_t i = 0; i < k; ++i) {
        const uint8_t byte = packed[i / 2];
        const int q = (i % 2 == 0 ? byte >> 4 : byte & 0x0F) - 8;
        const float w = static_cast<float>(q) * scales[i / rows.group];
        float& acc = lane[i % kLanes4w];
        acc = std::fma(x[i], w, acc);
      }
      const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
      rows.out[r * rows.n + n] = fold_lanes_int8(lane) + bias;
    }
  }
}

Columns4wFn select_linear_4w(int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % kLanes4w == 0) {
    return for_quant_isa<Columns4wFn>(isa, &linear_4w_columns_generic, &linear_4w_columns_avx2,
                                      &linear_4w_columns_avx2, &linear_4w_columns_avx512);
  }
#endif
  return &linear_4w_columns_generic;
}

}  // namespace torchlight::quantized
