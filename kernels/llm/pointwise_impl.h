// The loops behind pointwise_loops.h, written once over GCC/Clang vectors
// and compiled per instruction set by pointwise_{generic,avx2,avx512}.cpp.
// Include it only from those files (internal linkage, see vec_math_impl.h).
#pragma once

#include <cmath>
#include <cstdint>

#include "kernels/llm/vec_math_impl.h"

namespace torchlight::llm {
namespace {

// Below this, e^x is subnormal: exp_approx flushes it to 0, so blocks with
// such an input take the libm path.
constexpr float kSubnormalExp = -87.0f;

// x * sigmoid(x) per lane from e = e^-|x| in (0, 1], which cannot
// overflow: x / (1 + e) for x >= 0, x * e / (1 + e) below (one division,
// few roundings: within 3 ulp). +inf gives +inf, -inf NaN (-inf * 0, as
// the decomposed x * sigmoid(x) does), NaN NaN.
inline VecF silu(VecF x) {
  const VecF magnitude = x < 0.0f ? -x : x;
  const VecF e = exp_approx(-magnitude);
  const VecF numerator = x >= 0.0f ? x : x * e;
  return numerator / (1.0f + e);
}

// The same in double with libm, for inputs whose e^x is subnormal in float
// (x < kSubnormalExp): the result keeps its precision there.
inline float silu_libm(float x) {
  const double v = x;
  return static_cast<float>(v / (1.0 + std::exp(-v)));
}

// True when some lane of `mask` (a vector comparison's result) is set.
inline bool any_lane(VecI mask) {
  int32_t any = 0;
  for (int l = 0; l < kLanes; ++l) any |= mask[l];
  return any != 0;
}

// Blocks of this many vectors share one check for subnormal lanes.
constexpr int64_t kSiluBlock = 4 * kLanes;

// silu over n floats, times up[i] when kTimesUp (silu's result rounded
// first, as a separate silu then mul call rounds it).
template <bool kTimesUp>
inline void silu_span_of(const float* x, const float* up, float* y, int64_t n) {
  int64_t i = 0;
  for (; i + kSiluBlock <= n; i += kSiluBlock) {
    VecI below = load(x + i) < kSubnormalExp;
    for (int64_t j = kLanes; j < kSiluBlock; j += kLanes) below |= load(x + i + j) < kSubnormalExp;
    if (any_lane(below)) {
      for (int64_t j = i; j < i + kSiluBlock; ++j) {
        y[j] = kTimesUp ? silu_libm(x[j]) * up[j] : silu_libm(x[j]);
      }
      continue;
    }
    for (int64_t j = 0; j < kSiluBlock; j += kLanes) {
      VecF s = silu(load(x + i + j));
      if constexpr (kTimesUp) s = s * load(up + i + j);
      store(y + i + j, s);
    }
  }
  for (; i + kLanes <= n; i += kLanes) {
    const VecF v = load(x + i);
    if (any_lane(v < kSubnormalExp)) {
      for (int64_t j = i; j < i + kLanes; ++j) {
        y[j] = kTimesUp ? silu_libm(x[j]) * up[j] : silu_libm(x[j]);
      }
    } else {
      VecF s = silu(v);
      if constexpr (kTimesUp) s = s * load(up + i);
      store(y + i, s);
    }
  }
  for (; i < n; ++i) y[i] = kTimesUp ? silu_libm(x[i]) * up[i] : silu_libm(x[i]);
}

inline void silu_span(const float* x, float* y, int64_t n) {
  silu_span_of<false>(x, nullptr, y, n);
}

inline void silu_mul_span(const float* gate, const float* up, float* y, int64_t n) {
  silu_span_of<true>(gate, up, y, n);
}

// One row: the sum of squares in two vector accumulators, then the scaled
// product in the decomposed chain's order, (x * r) * weight.
inline void rms_norm_row(const float* x, const float* weight, float* y, int64_t dim, float eps) {
  VecF acc0{};
  VecF acc1{};
  int64_t d = 0;
  for (; d + 2 * kLanes <= dim; d += 2 * kLanes) {
    const VecF a = load(x + d);
    const VecF b = load(x + d + kLanes);
    acc0 += a * a;
    acc1 += b * b;
  }
  if (d + kLanes <= dim) {
    const VecF a = load(x + d);
    acc0 += a * a;
    d += kLanes;
  }
  float sum = lane_sum(acc0 + acc1);
  for (; d < dim; ++d) sum += x[d] * x[d];
  const float r = 1.0f / std::sqrt(sum / static_cast<float>(dim) + eps);
  const VecF vr = splat(r);
  d = 0;
  for (; d + kLanes <= dim; d += kLanes) store(y + d, load(x + d) * vr * load(weight + d));
  for (; d < dim; ++d) y[d] = x[d] * r * weight[d];
}

inline void rms_norm_rows(const float* x, int64_t x_stride, const float* weight, float* y,
                          int64_t y_stride, int64_t rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    rms_norm_row(x + r * x_stride, weight, y + r * y_stride, dim, eps);
  }
}

// Per row: sum = x + residual, then the sum's RMSNorm as rms_norm_row
// computes it (reading the rounded sum back, as add then rms_norm did).
inline void add_rms_norm_rows(const float* x, const float* residual, const float* weight,
                              float* sum, float* y, int64_t rows, int64_t dim, float eps) {
  for (int64_t r = 0; r < rows; ++r) {
    const int64_t at = r * dim;
    int64_t d = 0;
    for (; d + kLanes <= dim; d += kLanes) {
      store(sum + at + d, load(x + at + d) + load(residual + at + d));
    }
    for (; d < dim; ++d) sum[at + d] = x[at + d] + residual[at + d];
    rms_norm_row(sum + at, weight, y + at, dim, eps);
  }
}

}  // namespace
}  // namespace torchlight::llm
