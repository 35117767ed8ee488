// Portable loops of linear_8da4w (linear_8da4w.h), and the run-time choice.
#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {

void linear_8da4w_columns_generic(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const int64_t packed = row.k / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = row.weight + n * packed;
    float acc[kRows8da4w][kLanes8da4w] = {};
    for (int64_t g = 0; g < groups; ++g) {
      int32_t dot[kRows8da4w][kLanes8da4w] = {};
      int32_t wsum[kLanes8da4w] = {};
      for (int64_t k = g * row.group; k < (g + 1) * row.group; k += 2) {
        const int32_t hi = (w[k / 2] >> 4) - 8;
        const int32_t lo = (w[k / 2] & 15) - 8;
        const int lane = static_cast<int>(k % 32) / 4;  // k, k + 1 share a lane.
        wsum[lane] += hi + lo;
        for (int r = 0; r < row.rows; ++r) {
          const int8_t* x = row.xq + r * row.k;
          dot[r][lane] += x[k] * hi + x[k + 1] * lo;
        }
      }
      const float w_scale = row.w_scales[n * groups + g];
      for (int r = 0; r < row.rows; ++r) {
        const float scale = row.scale[r] * w_scale;
        for (int l = 0; l < kLanes8da4w; ++l) {
          const int32_t exact = dot[r][l] - row.zero_point[r] * wsum[l];
          acc[r][l] += static_cast<float>(exact) * scale;
        }
      }
    }
    for (int r = 0; r < row.rows; ++r) {
      float sum = fold_lanes_8da4w(acc[r]);
      if (row.bias != nullptr) sum += row.bias[n];
      row.out[r * row.n + n] = sum;
    }
  }
}

Columns8da4wFn select_linear_8da4w(int64_t group) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % 32 == 0 && __builtin_cpu_supports("avx2")) return &linear_8da4w_columns_avx2;
#endif
  (void)group;
  return &linear_8da4w_columns_generic;
}

}  // namespace torchlight::quantized
