// linear_8da4w's x86 loops (linear_8da4w_x86_impl.h), AVX-512 VNNI build:
// vpdpbusd in its EVEX 256-bit form (AVX512VL), and 512-bit steps for groups
// of a multiple of 128 (wide_groups), where the tile also takes two columns
// at a time. Built with -mavx512f
// -mavx512bw -mavx512vl -mavx512vnni; run only on CPUs with them
// (quant_isa.h).
#include "kernels/quantized/linear_8da4w_x86_impl.h"

namespace torchlight::quantized {

void linear_8da4w_columns_avx512vnni(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  loop_columns(row, n_begin, n_end);
}

void linear_8da4w_tile_avx512vnni(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  tile_columns(row, n_begin, n_end);
}

}  // namespace torchlight::quantized
