// linear_8da4w's x86 loops (linear_8da4w_x86_impl.h), AVX2 + FMA build:
// maddubs + madd. Built with -mavx2 -mfma; run only on CPUs with both
// (quant_isa.h).
#include "kernels/quantized/linear_8da4w_x86_impl.h"

namespace torchlight::quantized {

void linear_8da4w_columns_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  loop_columns(row, n_begin, n_end);
}

void linear_8da4w_tile_avx2(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  tile_columns(row, n_begin, n_end);
}

void fold_weight_sums_8da4w_avx2(const uint8_t* weight, const float* w_scales, int64_t k,
                                 int64_t group, int64_t n_begin, int64_t n_end, float* u_folded) {
  fold_weight_sums(weight, w_scales, k, group, n_begin, n_end, u_folded);
}

}  // namespace torchlight::quantized
