// Portable loops of linear_int8 (linear_int8.h), and the run-time choice.
// std::fma keeps the sums identical to the x86 loops' fused multiply-adds.
#include <cmath>

#include "kernels/quantized/int8_digit_split.h"
#include "kernels/quantized/linear_int8.h"
#include "kernels/quantized/linear_int8_vnni.h"

namespace torchlight::quantized {

void linear_int8_columns_generic(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    for (int r = 0; r < rows.rows; ++r) {
      const float* x = rows.x + r * rows.k;
      float lane[kLanesInt8] = {};
      for (int64_t k = 0; k < rows.k; ++k) {
        float& acc = lane[k % kLanesInt8];
        acc = std::fma(x[k], static_cast<float>(w[k]), acc);
      }
      const float bias = rows.bias != nullptr ? rows.bias[n] : 0.0f;
      rows.out[r * rows.n + n] = std::fma(fold_lanes_int8(lane), rows.scales[n], bias);
    }
  }
}

ColumnsInt8Fn select_linear_int8(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  return for_quant_isa<ColumnsInt8Fn>(isa, &linear_int8_columns_generic, &linear_int8_columns_avx2,
                                      &linear_int8_columns_avx2, &linear_int8_columns_avx512);
#else
  (void)isa;
  return &linear_int8_columns_generic;
#endif
}

ColumnsInt8VnniFn select_linear_int8_vnni(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == QuantIsa::kAvx512Vnni || isa == QuantIsa::kAmx) return &linear_int8_vnni_columns_avx512;
  if (isa == QuantIsa::kAvxVnni) return &linear_int8_vnni_columns_avxvnni;
#else
  (void)isa;
#endif
  return nullptr;
}

SplitRowInt8VnniFn select_split_row_int8_vnni(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (isa == QuantIsa::kAvx512Vnni || isa == QuantIsa::kAmx) return &split_row_int8_vnni_avx512;
  if (isa == QuantIsa::kAvxVnni) return &split_row_int8_vnni_avxvnni;
#else
  (void)isa;
#endif
  return nullptr;
}

bool linear_int8_takes_vnni(int64_t k, QuantIsa isa) {
  // AVX-VNNI only with a vector digit split: the portable one (~6.5 ns a
  // value) cost more than the loop saves (BM_int8_decode_vnni/isa:2 against
  // the AVX2 float loop: 768 x 288 0.89x; with the AVX2 split 1.7-2x).
  const bool split_ok = isa != QuantIsa::kAvxVnni ||
                        select_split_int8_digits(QuantIsa::kAvxVnni) != &split_int8_digits_generic;
  return k >= 1 && k <= kMaxKInt8Vnni && split_ok && select_linear_int8_vnni(isa) != nullptr;
}

}  // namespace torchlight::quantized
