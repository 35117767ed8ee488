// Helpers the fused pointwise kernels' tests share (op_pointwise_test.cpp,
// op_block_ops_test.cpp): deterministic inputs, double-precision references
// of silu and RMSNorm, an ulp comparison, and every build of the loops.
#pragma once

#include <gtest/gtest.h>

#include <cfloat>
#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/llm/pointwise_loops.h"
#include "runtime/core/scalar_type.h"

namespace torchlight::llm::test_util {

inline constexpr ScalarType kF32 = ScalarType::kFloat;
inline constexpr float kInf = std::numeric_limits<float>::infinity();
inline constexpr float kNaN = std::numeric_limits<float>::quiet_NaN();

// Values in [-amplitude, amplitude) as floats. A 64-bit LCG: deterministic.
inline std::vector<float> random_floats(size_t n, uint64_t seed, double amplitude) {
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  std::vector<float> out(n);
  for (float& v : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(x >> 11) / 9007199254740992.0;  // [0, 1)
    v = static_cast<float>((2 * unit - 1) * amplitude);
  }
  return out;
}

inline double silu_reference(double x) {
  if (std::isnan(x)) return x;
  if (x == -INFINITY) return NAN;  // -inf * sigmoid(-inf) = -inf * 0, as the chain gives.
  return x / (1.0 + std::exp(-x));
}

// Distance between neighbouring floats at |v| (subnormal spacing below FLT_MIN).
inline double ulp_at(double v) {
  const float f = static_cast<float>(std::fabs(v));
  if (f < FLT_MIN) return std::numeric_limits<float>::denorm_min();
  if (std::isinf(f)) return INFINITY;
  return static_cast<double>(std::nextafter(f, kInf) - f);
}

// `actual` within `ulps` of the exact result (NaN for NaN, infinities equal).
inline ::testing::AssertionResult within_ulps(float actual, double expected, double ulps) {
  if (std::isnan(expected)) {
    if (std::isnan(actual)) return ::testing::AssertionSuccess();
  } else if (std::isinf(expected) || std::isinf(actual)) {
    if (static_cast<double>(actual) == expected) return ::testing::AssertionSuccess();
  } else if (std::fabs(actual - expected) <= ulps * ulp_at(expected)) {
    return ::testing::AssertionSuccess();
  }
  return ::testing::AssertionFailure() << "got " << actual << ", expected " << expected;
}

inline std::vector<float> special_values() {
  std::vector<float> v = {0.0f,    -0.0f,   kInf,   -kInf,   kNaN,   FLT_MAX, -FLT_MAX,
                          1e30f,   -1e30f,  1e-40f, -1e-40f, 1e-45f, FLT_MIN, -FLT_MIN,
                          88.0f,   -87.0f,  -87.5f, -88.7f,  -89.0f, -100.0f, -103.0f,
                          -104.0f, -110.0f, 89.0f,  100.0f,  16.0f,  -16.0f, 0.5f,
                          -0.5f,   1e-8f,   -1e-8f, 3.0f,    -3.0f};
  return v;
}

inline std::vector<const PointwiseVariant*> all_variants() {
  size_t count = 0;
  const PointwiseVariant* table = pointwise_variants(&count);
  std::vector<const PointwiseVariant*> out;
  for (size_t i = 0; i < count; ++i) out.push_back(&table[i]);
  return out;
}

inline std::vector<double> rms_norm_reference(const std::vector<float>& x,
                                              const std::vector<float>& w, int rows, int dim,
                                              double eps) {
  std::vector<double> out(x.size());
  for (int r = 0; r < rows; ++r) {
    double sum = 0;
    for (int d = 0; d < dim; ++d) sum += static_cast<double>(x[r * dim + d]) * x[r * dim + d];
    const double scale = 1.0 / std::sqrt(sum / dim + eps);
    for (int d = 0; d < dim; ++d) out[r * dim + d] = x[r * dim + d] * scale * w[d];
  }
  return out;
}

inline std::vector<double> to_doubles(const std::vector<float>& v) {
  return std::vector<double>(v.begin(), v.end());
}

// Kernel tests run with the pool at GetParam() threads (1 and 2: see
// kPoolThreads), restored to one per core after.
class PoolThreadsTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

inline const auto kPoolThreads = ::testing::Values(size_t{1}, size_t{2});

inline std::string pool_threads_name(const ::testing::TestParamInfo<size_t>& info) {
  return "threads" + std::to_string(info.param);
}

}  // namespace torchlight::llm::test_util
