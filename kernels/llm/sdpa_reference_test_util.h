// The double-precision reference of the attention-with-cache tests
// (op_sdpa_with_kv_cache_test.cpp, op_rope_sdpa_with_kv_cache_test.cpp):
// the contract written plainly, and the inputs they share.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "extension/threadpool/threadpool.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::llm {
namespace sdpa_test {

struct Shape {
  int b, hq, hkv, t, s, d;
};

// Values in [-amplitude, amplitude), rounded to float so the reference sees
// exactly what the kernel stores. A 64-bit LCG: deterministic everywhere.
inline std::vector<double> random_values(size_t n, uint64_t seed, double amplitude = 1.0) {
  uint64_t x = seed * 6364136223846793005ULL + 1442695040888963407ULL;
  std::vector<double> out(n);
  for (double& v : out) {
    x = x * 6364136223846793005ULL + 1442695040888963407ULL;
    const double unit = static_cast<double>(x >> 11) / 9007199254740992.0;  // [0, 1)
    v = static_cast<float>((2 * unit - 1) * amplitude);
  }
  return out;
}

inline size_t idx(const std::vector<int>& sizes, std::initializer_list<int> index) {
  size_t flat = 0;
  size_t d = 0;
  for (int i : index) flat = flat * sizes[d++] + i;
  return flat;
}

// The contract in double precision: write the rows, then attend causally.
struct ReferenceCache {
  Shape shape;
  std::vector<double> keys;    // [B, Hkv, S, D]
  std::vector<double> values;  // [B, Hkv, S, D]

  std::vector<double> step(const std::vector<double>& q, const std::vector<double>& k,
                           const std::vector<double>& v, const std::vector<int64_t>& pos,
                           double scale) {
    const Shape& s = shape;
    const std::vector<int> cache{s.b, s.hkv, s.s, s.d};
    const std::vector<int> step{s.b, s.hkv, s.t, s.d};
    const std::vector<int> query{s.b, s.hq, s.t, s.d};
    for (int b = 0; b < s.b; ++b) {
      for (int g = 0; g < s.hkv; ++g) {
        for (int i = 0; i < s.t; ++i) {
          for (int d = 0; d < s.d; ++d) {
            const int p = static_cast<int>(pos[i]);
            keys[idx(cache, {b, g, p, d})] = k[idx(step, {b, g, i, d})];
            values[idx(cache, {b, g, p, d})] = v[idx(step, {b, g, i, d})];
          }
        }
      }
    }
    std::vector<double> out(q.size());
    for (int b = 0; b < s.b; ++b) {
      for (int h = 0; h < s.hq; ++h) {
        const int g = h / (s.hq / s.hkv);
        for (int i = 0; i < s.t; ++i) {
          const int n = static_cast<int>(pos[i]) + 1;
          std::vector<double> w(n);
          double m = -INFINITY;
          for (int j = 0; j < n; ++j) {
            double dot = 0;
            for (int d = 0; d < s.d; ++d) {
              dot += q[idx(query, {b, h, i, d})] * keys[idx(cache, {b, g, j, d})];
            }
            w[j] = scale * dot;
            m = std::max(m, w[j]);
          }
          double sum = 0;
          for (double& x : w) sum += (x = std::exp(x - m));
          for (int d = 0; d < s.d; ++d) {
            double acc = 0;
            for (int j = 0; j < n; ++j) acc += w[j] * values[idx(cache, {b, g, j, d})];
            out[idx(query, {b, h, i, d})] = acc / sum;
          }
        }
      }
    }
    return out;
  }
};

inline std::vector<double> to_doubles(const std::vector<int64_t>& v) {
  return std::vector<double>(v.begin(), v.end());
}

inline std::vector<int64_t> positions(int64_t start, int64_t count) {
  std::vector<int64_t> pos;
  for (int64_t i = 0; i < count; ++i) pos.push_back(start + i);
  return pos;
}

/// Caches of `s` holding stale values (a call must overwrite or ignore
/// them), float32, and the reference starting from the same values.
struct StaleCaches {
  std::unique_ptr<portable::kernel_test::TestTensor> key;
  std::unique_ptr<portable::kernel_test::TestTensor> value;
  ReferenceCache reference;
};

inline StaleCaches stale_caches(const Shape& s, uint64_t seed) {
  using portable::kernel_test::TestTensor;
  const std::vector<SizesType> sizes{s.b, s.hkv, s.s, s.d};
  const size_t n = static_cast<size_t>(s.b) * s.hkv * s.s * s.d;
  StaleCaches c;
  c.key = std::make_unique<TestTensor>(ScalarType::kFloat, sizes, random_values(n, seed + 1));
  c.value = std::make_unique<TestTensor>(ScalarType::kFloat, sizes, random_values(n, seed + 2));
  c.reference = ReferenceCache{s, c.key->values(), c.value->values()};
  return c;
}

/// Value tests run with 1 and 2 pool threads (the parameter).
class PoolThreadsTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

/// Each out element within `tolerance` (relative above 1) of the reference.
inline void expect_out_near(const std::vector<double>& actual, const std::vector<double>& expected,
                            double tolerance, int call) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    ASSERT_NEAR(actual[i], expected[i], tolerance * std::max(1.0, std::fabs(expected[i])))
        << "out element " << i << " of call " << call;
  }
}

}  // namespace sdpa_test
}  // namespace torchlight::llm
