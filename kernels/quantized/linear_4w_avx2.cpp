// linear_4w's x86 loop (linear_4w_x86_impl.h), AVX2 build: 8-float vectors.
// Built with -mavx2 -mfma; run only on CPUs with both (select_linear_4w).
#include "kernels/quantized/linear_4w_x86_impl.h"

namespace torchlight::quantized {

void linear_4w_columns_avx2(const Rows4w& rows, int64_t n_begin, int64_t n_end) {
  loop_columns_4w(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
