// Portable loops of linear_8da4w (linear_8da4w.h), and the run-time choice.
// std::fma keeps the sums identical to the AVX2 loop's fused multiply-adds.
#include <cmath>

#include "kernels/quantized/linear_8da4w.h"

namespace torchlight::quantized {

namespace {

// Group g's exact sums of column n in the lanes linear_8da4w.h names: the
// products of each row into dot[r] (rows may be 0), sum u into usum; returns
// the quarters (bit q: lanes 4q..4q+3) its chunks map to.
unsigned group_sums(const Row8da4w& row, const uint8_t* w, int64_t k, int64_t group, int64_t g,
                    int32_t (*dot)[kLanes8da4w], int rows, int32_t* usum) {
  const int64_t per_group = chunks_per_group_8da4w(group);
  unsigned quarters = 0;
  for (int64_t ci = 0; ci < per_group; ++ci) {
    const int64_t c0 = g * group + 32 * ci;  // The chunk's first position in the row.
    const int64_t c = g * per_group + ci;    // Its number along the row.
    const int64_t length = (g + 1) * group - c0 < 32 ? (g + 1) * group - c0 : 32;
    const int64_t half = length / 2;
    quarters |= 1u << (c % 4);
    for (int64_t p = 0; p < length; ++p) {
      const uint8_t byte = w[c0 / 2 + (p < half ? p : p - half)];
      const int32_t u = p < half ? (byte & 15) : (byte >> 4);
      usum[usum_lane_8da4w(c, p, length)] += u;
      const int lane = product_lane_8da4w(c, p, length);
      for (int r = 0; r < rows; ++r) dot[r][lane] += row.xq[r * k + c0 + p] * u;
    }
  }
  return quarters;
}

int32_t lane_total(const int32_t* lanes) {
  int32_t total = 0;
  for (int l = 0; l < kLanes8da4w; ++l) total += lanes[l];
  return total;
}

}  // namespace

void linear_8da4w_columns_generic(const Row8da4w& row, int64_t n_begin, int64_t n_end) {
  const int64_t groups = row.k / row.group;
  const int64_t packed = row.k / 2;
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = row.weight + n * packed;
    float acc[kRows8da4w][kLanes8da4w] = {};
    float uacc[kLanes8da4w] = {};
    const bool lone_last = lone_last_group_8da4w(row.group, groups);
    const int64_t in_lanes = lone_last ? groups - 1 : groups;
    for (int64_t g = 0; g < in_lanes; ++g) {
      int32_t dot[kRows8da4w][kLanes8da4w] = {};
      int32_t usum[kLanes8da4w] = {};
      const unsigned quarters = group_sums(row, w, row.k, row.group, g, dot, row.rows, usum);
      const float w_scale = row.w_scales[n * groups + g];
      for (int l = 0; l < kLanes8da4w; ++l) {
        if ((quarters >> (l / 4) & 1) == 0) continue;  // Lanes of other groups' chunks.
        uacc[l] = std::fma(static_cast<float>(usum[l]), w_scale, uacc[l]);
        for (int r = 0; r < row.rows; ++r) {
          acc[r][l] = std::fma(static_cast<float>(dot[r][l]), w_scale, acc[r][l]);
        }
      }
    }
    // The last group alone, after the fold (lone_last_group_8da4w).
    float products[kRows8da4w];
    for (int r = 0; r < row.rows; ++r) products[r] = fold_lanes_8da4w(acc[r]);
    float u_sum = fold_lanes_8da4w(uacc);
    if (lone_last) {
      int32_t dot[kRows8da4w][kLanes8da4w] = {};
      int32_t usum[kLanes8da4w] = {};
      group_sums(row, w, row.k, row.group, groups - 1, dot, row.rows, usum);
      const float w_scale = row.w_scales[n * groups + groups - 1];
      u_sum = std::fma(static_cast<float>(lane_total(usum)), w_scale, u_sum);
      for (int r = 0; r < row.rows; ++r) {
        products[r] = std::fma(static_cast<float>(lane_total(dot[r])), w_scale, products[r]);
      }
    }
    const float u_folded = row.u_folded != nullptr ? row.u_folded[n] : u_sum;
    const float bias = row.bias != nullptr ? row.bias[n] : 0.0f;
    for (int r = 0; r < row.rows; ++r) {
      float lanes[kLanes8da4w] = {};
      const float corrections = fold_corrections_8da4w(lanes, row.w_scales + n * groups,
                                                       row.correction + r * groups, 0, groups);
      const float sum = finish_column_8da4w(products[r], u_folded, corrections,
                                            row.zero_point[r]);
      row.out[r * row.n + n] = std::fma(sum, row.scale[r], bias);
    }
  }
}

void fold_weight_sums_8da4w(const uint8_t* weight, const float* w_scales, int64_t k,
                            int64_t group, int64_t n_begin, int64_t n_end, float* u_folded) {
  const int64_t groups = k / group;
  const int64_t packed = k / 2;
  Row8da4w none{};
  for (int64_t n = n_begin; n < n_end; ++n) {
    const uint8_t* w = weight + n * packed;
    float uacc[kLanes8da4w] = {};
    const bool lone_last = lone_last_group_8da4w(group, groups);
    for (int64_t g = 0; g < groups - (lone_last ? 1 : 0); ++g) {
      int32_t usum[kLanes8da4w] = {};
      const unsigned quarters = group_sums(none, w, k, group, g, nullptr, 0, usum);
      const float w_scale = w_scales[n * groups + g];
      for (int l = 0; l < kLanes8da4w; ++l) {
        if ((quarters >> (l / 4) & 1) != 0) uacc[l] = std::fma(static_cast<float>(usum[l]), w_scale, uacc[l]);
      }
    }
    u_folded[n] = fold_lanes_8da4w(uacc);
    if (lone_last) {
      int32_t usum[kLanes8da4w] = {};
      group_sums(none, w, k, group, groups - 1, nullptr, 0, usum);
      u_folded[n] = std::fma(static_cast<float>(lane_total(usum)), w_scales[n * groups + groups - 1], u_folded[n]);
    }
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
