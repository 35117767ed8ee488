// Portable loop of linear_qs8 (linear_qs8.h), and the run-time choice.
#include "kernels/quantized/linear_qs8.h"

namespace torchlight::quantized {

void linear_qs8_columns_generic(const RowsQs8& rows, int64_t n_begin, int64_t n_end) {
  for (int64_t n = n_begin; n < n_end; ++n) {
    const int8_t* w = rows.weight + n * rows.k;
    for (int r = 0; r < rows.rows; ++r) {
      const int8_t* x = rows.x + r * rows.k;
      int32_t sum = 0;
      for (int64_t k = 0; k < rows.k; ++k) sum += (int32_t{x[k]} - rows.zero_point) * w[k];
      rows.out[r * rows.n + n] = finish_qs8(rows, n, sum);
    }
  }
}

ColumnsQs8Fn select_linear_qs8(QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  return for_quant_isa<ColumnsQs8Fn>(isa, &linear_qs8_columns_generic, &linear_qs8_columns_avx2,
                                     &linear_qs8_columns_avxvnni, &linear_qs8_columns_avx512vnni);
#else
  (void)isa;
  return &linear_qs8_columns_generic;
#endif
}

bool linear_qs8_uses_weight_sums(QuantIsa isa) { return isa >= QuantIsa::kAvxVnni; }

void weight_sums_qs8(const int8_t* weight, int64_t k, int64_t n_begin, int64_t n_end,
                     int32_t* sums) {
  for (int64_t n = n_begin; n < n_end; ++n) {
    int32_t sum = 0;
    for (int64_t i = 0; i < k; ++i) sum += weight[n * k + i];
    sums[n] = sum;
  }
}

}  // namespace torchlight::quantized
