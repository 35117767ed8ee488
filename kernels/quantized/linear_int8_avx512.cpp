// linear_int8's x86 loops (linear_int8_x86_impl.h), AVX-512 build: 16-float
// vectors. Built with -mavx2 -mfma -mavx512f -mavx512bw -mavx512vl; run only
// where quant_isa() is AVX-512 VNNI or above, which checks F, BW and VL.
#include "kernels/quantized/linear_int8_x86_impl.h"

namespace torchlight::quantized {

void linear_int8_columns_avx512(const RowsInt8& rows, int64_t n_begin, int64_t n_end) {
  loop_columns_int8(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
