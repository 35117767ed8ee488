// Portable loops of linear_8da4w (linear_8da4w.h), and the run-time choice.
// std::fma keeps the sums identical to the AVX2 loop's fused multiply-adds.
#include <cmath>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {

void linear_8da4w_columns_generic(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const int64_t packed = row.k / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = row.weight + n * packed;
    float acc[kRows8da4w][kLanes8da4w] = {};
    float uacc[kLanes8da4w] = {};
    for (int64_t g = 0; g < groups; ++g) {
      int32_t dot[kRows8da4w][kLanes8da4w] = {};
      int32_t usum[kLanes8da4w] = {};
      for (int64_t c0 = g * row.group; c0 < (g + 1) * row.group; c0 += 32) {
        const int64_t length = (g + 1) * row.group - c0 < 32 ? (g + 1) * row.group - c0 : 32;
        const int64_t half = length / 2;
        const Chunk8da4w chunk = chunk_8da4w(row.group, groups, g, (c0 - g * row.group) / 32);
        for (int64_t p = 0; p < length; ++p) {
          const uint8_t byte = w[c0 / 2 + (p < half ? p : p - half)];
          const int32_t u = p < half ? (byte & 15) : (byte >> 4);
          usum[usum_lane_8da4w(chunk, p)] += u;
          const int lane = product_lane_8da4w(chunk, p);
          for (int r = 0; r < row.rows; ++r) dot[r][lane] += row.xq[r * row.k + c0 + p] * u;
        }
      }
      // A group that is half of a pair of groups owns four lanes only.
      const Chunk8da4w first = chunk_8da4w(row.group, groups, g, 0);
      const int lane_begin = first.group_pair ? 4 * first.second : 0;
      const int lane_end = first.group_pair ? lane_begin + 4 : kLanes8da4w;
      const float w_scale = row.w_scales[n * groups + g];
      for (int l = lane_begin; l < lane_end; ++l) {
        uacc[l] = std::fma(static_cast<float>(usum[l]), w_scale, uacc[l]);
        for (int r = 0; r < row.rows; ++r) {
          acc[r][l] = std::fma(static_cast<float>(dot[r][l]), w_scale, acc[r][l]);
        }
      }
    }
    const float u_folded = row.u_folded != nullptr ? row.u_folded[n] : fold_lanes_8da4w(uacc);
    const float bias = row.bias != nullptr ? row.bias[n] : 0.0f;
    for (int r = 0; r < row.rows; ++r) {
      float lanes[kLanes8da4w] = {};
      const float corrections = fold_corrections_8da4w(lanes, row.w_scales + n * groups,
                                                       row.correction + r * groups, 0, groups);
      const float sum = finish_column_8da4w(fold_lanes_8da4w(acc[r]), u_folded, corrections,
                                            row.zero_point[r]);
      row.out[r * row.n + n] = std::fma(sum, row.scale[r], bias);
    }
  }
}

void fold_weight_sums_8da4w(const uint8_t* weight, const float* w_scales, int64_t k,
                            int64_t group, int64_t n_begin, int64_t n_end, float* u_folded) {
  const int64_t groups = k / group;
  const int64_t packed = k / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = weight + n * packed;
    float uacc[kLanes8da4w] = {};
    for (int64_t g = 0; g < groups; ++g) {
      int32_t usum[kLanes8da4w] = {};
      for (int64_t c0 = g * group; c0 < (g + 1) * group; c0 += 32) {
        const int64_t length = (g + 1) * group - c0 < 32 ? (g + 1) * group - c0 : 32;
        const int64_t half = length / 2;
        const Chunk8da4w chunk = chunk_8da4w(group, groups, g, (c0 - g * group) / 32);
        for (int64_t p = 0; p < length; ++p) {
          const uint8_t byte = w[c0 / 2 + (p < half ? p : p - half)];
          usum[usum_lane_8da4w(chunk, p)] += p < half ? (byte & 15) : (byte >> 4);
        }
      }
      const Chunk8da4w first = chunk_8da4w(group, groups, g, 0);
      const int lane_begin = first.group_pair ? 4 * first.second : 0;
      const int lane_end = first.group_pair ? lane_begin + 4 : kLanes8da4w;
      const float w_scale = w_scales[n * groups + g];
      for (int l = lane_begin; l < lane_end; ++l) {
        uacc[l] = std::fma(static_cast<float>(usum[l]), w_scale, uacc[l]);
      }
    }
    u_folded[n] = fold_lanes_8da4w(uacc);
  }
}

FoldWeightSums8da4wFn select_fold_weight_sums_8da4w(int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  // The weight sums have no products: every x86 build's are AVX2's.
  if (group % 32 == 0 && isa >= QuantIsa::kAvx2) return &fold_weight_sums_8da4w_avx2;
#endif
  (void)group;
  (void)isa;
  return &fold_weight_sums_8da4w;
}

Columns8da4wFn select_linear_8da4w(int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % 32 == 0) {
    return for_quant_isa<Columns8da4wFn>(isa, &linear_8da4w_columns_generic, &linear_8da4w_columns_avx2,
                                         &linear_8da4w_columns_avxvnni, &linear_8da4w_columns_avx512vnni);
  }
#endif
  (void)group;
  (void)isa;
  return &linear_8da4w_columns_generic;
}

Columns8da4wFn select_tile_8da4w(int64_t group, QuantIsa isa) {
#if defined(__x86_64__) || defined(_M_X64)
  if (group % 32 == 0) {
    return for_quant_isa<Columns8da4wFn>(isa, nullptr, &linear_8da4w_tile_avx2,
                                         &linear_8da4w_tile_avxvnni, &linear_8da4w_tile_avx512vnni);
  }
#endif
  (void)group;
  (void)isa;
  return nullptr;
}

}  // namespace torchlight::quantized
