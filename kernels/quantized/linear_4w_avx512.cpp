// linear_4w's x86 loop (linear_4w_x86_impl.h), AVX-512 build: 16-float
// vectors, two per 32 weights. Built with -mavx2 -mfma -mavx512f -mavx512bw
// -mavx512vl; run only where quant_isa() is AVX-512 VNNI or above, which
// checks F, BW and VL.
#include "kernels/quantized/linear_4w_x86_impl.h"

namespace torchlight::quantized {

void linear_4w_columns_avx512(const Rows4w& rows, int64_t n_begin, int64_t n_end) {
  loop_columns_4w(rows, n_begin, n_end);
}

}  // namespace torchlight::quantized
