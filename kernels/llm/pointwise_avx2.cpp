// The fused pointwise loops (pointwise_impl.h), avx2 build. Built with -mavx2 -mfma (CMakeLists.txt), 8-float vectors; chosen at run time only on CPUs with both (pointwise_dispatch.cpp).
#define TL_VEC_LANES 8
#include "kernels/llm/pointwise_impl.h"
#include "kernels/llm/pointwise_loops.h"

namespace torchlight::llm {

void silu_avx2(const float* x, float* y, int64_t n) { silu_span(x, y, n); }

void silu_mul_avx2(const float* gate, const float* up, float* y, int64_t n) {
  silu_mul_span(gate, up, y, n);
}

void rms_norm_avx2(const float* x, int64_t x_stride, const float* weight, float* y,
                   int64_t y_stride, int64_t rows, int64_t dim, float eps) {
  rms_norm_rows(x, x_stride, weight, y, y_stride, rows, dim, eps);
}

void add_rms_norm_avx2(const float* x, const float* residual, const float* weight, float* sum,
                       float* y, int64_t rows, int64_t dim, float eps) {
  add_rms_norm_rows(x, residual, weight, sum, y, rows, dim, eps);
}

}  // namespace torchlight::llm
