// linear_int8's x86 loops (linear_int8_x86_impl.h), AVX2 build: 8-float
// vectors. Built with -mavx2 -mfma; run only on CPUs with both
// (select_linear_int8).
#include "kernels/quantized/linear_int8_x86_impl.h"

namespace torchlight::quantized {

void linear_int8_columns_avx2(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  loop_columns_int8(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
