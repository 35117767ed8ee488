// Test helper shared by op_linear_test.cpp and op_matmul_test.cpp: the
// tolerance of a float32 dot product against its double reference.
#pragma once

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <vector>

namespace torchlight::optimized::test_util {

/// Every element of `got` within 1e-5 * sqrt(k) of `want` (relative above
/// magnitude 1): float32 rounding over k accumulated products grows about
/// as sqrt(k).
inline void expect_near_all(const std::vector<double>& got, const std::vector<double>& want,
                            int64_t k) {
  ASSERT_EQ(got.size(), want.size());
  const double scale = 1e-5 * std::sqrt(static_cast<double>(k > 0 ? k : 1));
  for (size_t i = 0; i < got.size(); ++i) {
    ASSERT_NEAR(got[i], want[i], scale * std::fmax(1.0, std::fabs(want[i]))) << "element " << i;
  }
}

}  // namespace torchlight::optimized::test_util
