// linear_8da4w's x86 loops (linear_8da4w_x86_impl.h), AVX-VNNI build:
// 256-bit VEX vpdpbusd. Built with -mavx2 -mfma -mavxvnni; run only on CPUs
// with AVX-VNNI (quant_isa.h).
#include "kernels/quantized/linear_8da4w_x86_impl.h"

namespace torchlight::quantized {

void linear_8da4w_columns_avxvnni(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  loop_columns(row, n_begin, n_end);
}

void linear_8da4w_tile_avxvnni(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  tile_columns(row, n_begin, n_end);
}

}  // namespace torchlight::quantized
