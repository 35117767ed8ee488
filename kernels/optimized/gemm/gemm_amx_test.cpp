// gemm's AMX-BF16 path (gemm_amx_kernels.h) against float64, on CPUs with
// AMX granted (skipped elsewhere).
//
// Bound, per element with S = sum_k |a_k w_k| (+ |bias|):
//   |got - ref| <= 2^-20 S + 2^-23 sqrt(K) S.
// The first term covers the three dropped products (below 2^-21 S, see
// gemm_amx_kernels.h, doubled); the second the fp32 rounding of summing the
// 6K exact products in the tiles (random-walk growth, with margin). Three
// products (hh, hm, mh) drop about 2^-15 S when the data has one sign
// (split parts share x's sign, so the dropped terms do not cancel): they
// fail it for every K below ~2^12 (ThreeProductsFailTheBound).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <random>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"
#include "kernels/optimized/gemm/gemm_amx_kernels.h"
#include "kernels/optimized/gemm/owned_workspace.h"

namespace torchlight::optimized {
namespace {

GemmWorkspace test_workspace() {
  static OwnedGemmWorkspace workspace(8);
  return workspace.get();
}

struct AlignedBuffer {
  explicit AlignedBuffer(size_t bytes)
      : data(std::aligned_alloc(64, (bytes + 63) / 64 * 64 + 64)) {}
  ~AlignedBuffer() { std::free(data); }
  AlignedBuffer(const AlignedBuffer&) = delete;
  AlignedBuffer& operator=(const AlignedBuffer&) = delete;
  void* data;
};

enum class Values {
  kMixed,     // Random signs, magnitudes 2^-20 .. 2^20 mixed in each row.
  kPositive,  // (0, 1]: one sign, so truncation errors add up.
};

struct Case {
  int64_t m, n, k;
  std::vector<float> a;     // [m, k + 3]: padded rows.
  std::vector<float> w;     // [n, k + 1]
  std::vector<float> bias;  // [n]
  int64_t lda, ldw;
  std::vector<double> ref;  // [m, n]: bias + a @ w^T
  std::vector<double> size; // [m, n]: S
};

Case make_case(int64_t m, int64_t n, int64_t k, Values values, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::uniform_int_distribution<int> exponent(-20, 20);
  auto draw = [&]() {
    if (values == Values::kPositive) return 1.0f - 0.999f * std::fabs(unit(rng));
    return std::ldexp(unit(rng), exponent(rng));
  };
  Case c;
  c.m = m;
  c.n = n;
  c.k = k;
  c.lda = k + 3;
  c.ldw = k + 1;
  c.a.assign(static_cast<size_t>(m * c.lda + 1), std::numeric_limits<float>::quiet_NaN());
  c.w.assign(static_cast<size_t>(n * c.ldw + 1), std::numeric_limits<float>::quiet_NaN());
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t q = 0; q < k; ++q) c.a[i * c.lda + q] = draw();
  }
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t q = 0; q < k; ++q) c.w[j * c.ldw + q] = draw();
  }
  c.bias.resize(static_cast<size_t>(n));
  for (auto& b : c.bias) b = unit(rng);
  c.ref.resize(static_cast<size_t>(m * n));
  c.size.resize(static_cast<size_t>(m * n));
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = c.bias[j];
      double s = std::fabs(c.bias[j]);
      for (int64_t q = 0; q < k; ++q) {
        const double p = static_cast<double>(c.a[i * c.lda + q]) * c.w[j * c.ldw + q];
        acc += p;
        s += std::fabs(p);
      }
      c.ref[i * n + j] = acc;
      c.size[i * n + j] = s;
    }
  }
  return c;
}

double bound(const Case& c, int64_t e) {
  return (std::ldexp(1.0, -20) + std::ldexp(1.0, -23) * std::sqrt(static_cast<double>(c.k))) *
         c.size[e];
}

// Largest |got - ref| / bound over C (> 1: outside the bound); C's padding
// column must keep its marker.
double worst_ratio(const Case& c, const std::vector<float>& out, int64_t ldc) {
  double worst = 0.0;
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      const double err = std::fabs(out[i * ldc + j] - c.ref[i * c.n + j]);
      const double r = err / bound(c, i * c.n + j);
      if (!(r <= worst)) worst = r;  // NaN sticks.
    }
    for (int64_t j = c.n; j < ldc; ++j) EXPECT_EQ(out[i * ldc + j], -3.0f) << i << "," << j;
  }
  return worst;
}

// C = a @ w^T + bias through gemm() on the active set, clamped to [lo, hi].
std::vector<float> run_gemm(const Case& c, const void* split = nullptr,
                            float lo = -std::numeric_limits<float>::infinity(),
                            float hi = std::numeric_limits<float>::infinity()) {
  const int64_t ldc = c.n + 1;
  std::vector<float> out(static_cast<size_t>(c.m * ldc), -3.0f);
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = c.m;
  p.n = c.n;
  p.k = c.k;
  p.a = ConstMatrix{c.a.data(), c.lda, 1};
  p.b = ConstMatrix{c.w.data(), 1, c.ldw};
  p.c = out.data();
  p.ldc = ldc;
  p.beta = 1.0f;
  p.addend = ConstMatrix{c.bias.data(), 0, 1};
  p.b_amx_split = split;
  p.output_min = lo;
  p.output_max = hi;
  const Status s = gemm(p);
  EXPECT_TRUE(s.ok()) << s.message();
  return out;
}

// The AMX block kernel alone (any row count, no thresholds).
std::vector<float> run_kernel(const Case& c, int products, const void* split = nullptr) {
  const int64_t ldc = c.n + 1;
  std::vector<float> out(static_cast<size_t>(c.m * ldc), -3.0f);
  internal::AmxNtBlock blk;
  blk.a = c.a.data();
  blk.lda = c.lda;
  blk.w = c.w.data();
  blk.ldw = c.ldw;
  blk.split_w = split;
  blk.k = c.k;
  blk.c = out.data();
  blk.ldc = ldc;
  blk.ep.beta = 1.0f;
  blk.ep.bias = c.bias.data();
  const GemmWorkspace ws = test_workspace();
  blk.scratch = ws.data;
  blk.scratch_bytes = ws.slot_floats * sizeof(float);
  blk.products = products;
  EXPECT_TRUE(internal::amx_gemm_kernels()->nt_block(blk, 0, c.m, 0, c.n));
  return out;
}

class GemmAmxTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!gemm_isa_supported(GemmIsa::kAmx)) GTEST_SKIP() << "no AMX-BF16 here";
    ASSERT_TRUE(set_gemm_isa(GemmIsa::kAmx).ok());
  }
  void TearDown() override {
    reset_gemm_isa();
    threadpool::set_num_threads(0);
  }
};

TEST_F(GemmAmxTest, KernelEveryRowCountAndEdge) {
  uint32_t seed = 1;
  for (int64_t m = 1; m <= 40; ++m) {
    for (int64_t n : {1, 16, 17, 33, 50}) {
      for (int64_t k : {1, 31, 32, 33, 130, 300}) {
        if ((m + n + k) % 3 != 0 && m > 3 && m != 16 && m != 32) continue;  // A third of them.
        SCOPED_TRACE(::testing::Message() << "m=" << m << " n=" << n << " k=" << k);
        const Case c = make_case(m, n, k, Values::kMixed, seed++);
        EXPECT_LE(worst_ratio(c, run_kernel(c, 6), c.n + 1), 1.0);
        AlignedBuffer split(gemm_amx_split_bytes(n, k));
        ASSERT_TRUE(gemm_amx_split_weight(c.w.data(), c.ldw, n, k, split.data));
        EXPECT_LE(worst_ratio(c, run_kernel(c, 6, split.data), c.n + 1), 1.0);
      }
    }
  }
}

TEST_F(GemmAmxTest, GemmMatchesFloat64AtOneAndTwoThreads) {
  struct Shape {
    int64_t m, n, k;
  };
  // Several row, column and K blocks; sizes off every tile grid.
  // At least 1024 rows: the AMX path without a pre-split weight.
  const Shape shapes[] = {{1024, 96, 200}, {1040, 130, 577}, {1100, 64, 64},
                          {1537, 40, 1000}, {1030, 300, 33}, {1057, 17, 129}};
  uint32_t seed = 100;
  for (size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const Shape& s : shapes) {
      SCOPED_TRACE(::testing::Message() << "threads=" << threads << " m=" << s.m << " n=" << s.n
                                        << " k=" << s.k);
      ASSERT_TRUE(gemm_uses_amx(s.m, s.n, s.k));
      const Case c = make_case(s.m, s.n, s.k, Values::kMixed, seed++);
      const std::vector<float> amx_out = run_gemm(c);
      const double amx = worst_ratio(c, amx_out, c.n + 1);
      AlignedBuffer split(gemm_amx_split_bytes(s.n, s.k));
      ASSERT_TRUE(gemm_amx_split_weight(c.w.data(), c.ldw, s.n, s.k, split.data));
      const double amx_split = worst_ratio(c, run_gemm(c, split.data), c.n + 1);
      ASSERT_TRUE(set_gemm_isa(GemmIsa::kAvx512).ok());
      const std::vector<float> avx512_out = run_gemm(c);
      const double avx512 = worst_ratio(c, avx512_out, c.n + 1);
      ASSERT_TRUE(set_gemm_isa(GemmIsa::kAmx).ok());
      // Other roundings: the AMX path ran (no silent fall-back to AVX-512).
      EXPECT_NE(amx_out, avx512_out);
      EXPECT_LE(amx, 1.0);
      EXPECT_LE(amx_split, 1.0);
      // Both paths' worst error, in units of the bound (reported, not asserted).
      std::printf("  m=%lld n=%lld k=%lld threads=%zu: worst error / bound: amx %.3f, avx512 %.3f\n",
                  static_cast<long long>(s.m), static_cast<long long>(s.n),
                  static_cast<long long>(s.k), threads, amx, avx512);
    }
  }
}

// Pre-split weights with few rows (a CNN's 7x7 layers: 49 pixels) split C
// by columns at 2 threads, more rows (14x14: 196) by rows:
// every element's arithmetic is the same, so 2 threads give 1 thread's
// bytes, within the float64 bound.
TEST_F(GemmAmxTest, TwoThreadsGiveOneThreadsBytesWithPreSplitWeights) {
  struct Shape {
    int64_t m, n, k;
  };
  const Shape shapes[] = {{49, 960, 160}, {49, 512, 600}, {196, 576, 96}, {33, 70, 300},
                          {196, 96, 576}, {300, 64, 64}};
  uint32_t seed = 200;
  for (const Shape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    ASSERT_TRUE(gemm_uses_amx(s.m, s.n, s.k));
    const Case c = make_case(s.m, s.n, s.k, Values::kMixed, seed++);
    AlignedBuffer split(gemm_amx_split_bytes(s.n, s.k));
    ASSERT_TRUE(gemm_amx_split_weight(c.w.data(), c.ldw, s.n, s.k, split.data));
    threadpool::set_num_threads(1);
    const std::vector<float> one = run_gemm(c, split.data);
    threadpool::set_num_threads(2);
    const std::vector<float> two = run_gemm(c, split.data);
    EXPECT_EQ(one, two);
    EXPECT_LE(worst_ratio(c, two, c.n + 1), 1.0);
  }
}

// The clamp in the AMX store (the fused ReLU6 of the XNNPACK delegate's
// convolutions) gives exactly the unclamped product clamped afterwards, at
// 1 and 2 threads, with the weight pre-split (from 32 rows) or split per call
// (from 1024), and with K in several passes (only the last one clamps: a
// clamped partial sum would change the result). The AVX-512 path clamps
// after its product: the same there.
TEST_F(GemmAmxTest, ClampInTheStoreEqualsClampingAfterwards) {
  struct Shape {
    int64_t m, n, k;
    bool pre_split;
  };
  const Shape shapes[] = {{96, 40, 70, true}, {196, 96, 600, true}, {49, 130, 320, true},
                          {1040, 33, 530, false}};
  uint32_t seed = 300;
  for (size_t threads : {size_t{1}, size_t{2}}) {
    threadpool::set_num_threads(threads);
    for (const Shape& sh : shapes) {
      SCOPED_TRACE(::testing::Message() << "threads=" << threads << " m=" << sh.m
                                        << " n=" << sh.n << " k=" << sh.k);
      const Case c = make_case(sh.m, sh.n, sh.k, Values::kPositive, seed++);
      AlignedBuffer split(gemm_amx_split_bytes(sh.n, sh.k));
      ASSERT_TRUE(gemm_amx_split_weight(c.w.data(), c.ldw, sh.n, sh.k, split.data));
      const void* w = sh.pre_split ? split.data : nullptr;
      for (GemmIsa isa : {GemmIsa::kAmx, GemmIsa::kAvx512}) {
        ASSERT_TRUE(set_gemm_isa(isa).ok());
        const std::vector<float> plain = run_gemm(c, w);
        // Bounds at about the 30th and 70th percentile of the last pass's
        // sums (partial sums of the first passes lie below them).
        std::vector<float> sorted(plain);
        std::sort(sorted.begin(), sorted.end());
        const float lo = sorted[sorted.size() * 3 / 10];
        const float hi = sorted[sorted.size() * 7 / 10];
        const std::vector<float> clamped = run_gemm(c, w, lo, hi);
        size_t below = 0, above = 0;
        for (size_t e = 0; e < plain.size(); ++e) {
          if (plain[e] == -3.0f) continue;  // C's padding column.
          below += plain[e] < lo;
          above += plain[e] > hi;
          ASSERT_EQ(clamped[e], std::min(std::max(plain[e], lo), hi))
              << to_string(isa) << " element " << e;
        }
        EXPECT_GT(below, plain.size() / 5);
        EXPECT_GT(above, plain.size() / 5);
      }
      ASSERT_TRUE(set_gemm_isa(GemmIsa::kAmx).ok());
    }
  }
}

TEST_F(GemmAmxTest, ThreeProductsFailTheBound) {
  for (int64_t k : {64, 256, 1024}) {
    SCOPED_TRACE(::testing::Message() << "k=" << k);
    const Case c = make_case(40, 48, k, Values::kPositive, static_cast<uint32_t>(k));
    EXPECT_LE(worst_ratio(c, run_kernel(c, 6), c.n + 1), 1.0);
    EXPECT_GT(worst_ratio(c, run_kernel(c, 3), c.n + 1), 1.0);
  }
}

TEST_F(GemmAmxTest, NonFiniteValuesGiveAvx512sResults) {
  const Case base = make_case(96, 40, 70, Values::kMixed, 7);
  const float inf = std::numeric_limits<float>::infinity();
  for (int which = 0; which < 3; ++which) {
    Case c = base;
    if (which == 0) c.a[5 * c.lda + 3] = inf;
    if (which == 1) c.w[33 * c.ldw + 69] = std::numeric_limits<float>::quiet_NaN();
    if (which == 2) c.a[90 * c.lda] = -inf;
    AlignedBuffer split(gemm_amx_split_bytes(c.n, c.k));
    EXPECT_EQ(gemm_amx_split_weight(c.w.data(), c.ldw, c.n, c.k, split.data), which != 1);
    const std::vector<float> amx = run_gemm(c);
    ASSERT_TRUE(set_gemm_isa(GemmIsa::kAvx512).ok());
    const std::vector<float> avx512 = run_gemm(c);
    ASSERT_TRUE(set_gemm_isa(GemmIsa::kAmx).ok());
    size_t non_finite = 0;
    for (size_t e = 0; e < amx.size(); ++e) {
      ASSERT_EQ(std::isnan(amx[e]), std::isnan(avx512[e])) << "case " << which << " element " << e;
      if (!std::isnan(amx[e])) {
        ASSERT_EQ(amx[e], avx512[e]) << "case " << which << " element " << e;
      }
      non_finite += std::isfinite(amx[e]) ? 0 : 1;
    }
    EXPECT_GE(non_finite, size_t{40}) << "case " << which;  // A whole row or column.
  }
}

TEST_F(GemmAmxTest, DenormalPartsAreFlushedWithinTheStatedError) {
  // A near 2^-120 (some denormal in fp32): parts below 2^-126 are read as
  // zero and products below it flushed, so the error may exceed the fp32
  // bound by (3 sum_k |w_k| + 6K) 2^-126 (gemm_amx_kernels.h), no more.
  Case c = make_case(64, 32, 96, Values::kPositive, 9);
  for (auto& v : c.a) v = std::isnan(v) ? v : std::ldexp(v, -120);
  for (auto& b : c.bias) b = 0.0f;
  const std::vector<float> out = run_gemm(c);
  for (int64_t i = 0; i < c.m; ++i) {
    for (int64_t j = 0; j < c.n; ++j) {
      double ref = 0.0, size = 0.0, sum_w = 0.0;
      for (int64_t q = 0; q < c.k; ++q) {
        const double p = static_cast<double>(c.a[i * c.lda + q]) * c.w[j * c.ldw + q];
        ref += p;
        size += std::fabs(p);
        sum_w += std::fabs(c.w[j * c.ldw + q]);
      }
      const double tol = (3 * sum_w + 6 * c.k) * std::ldexp(1.0, -126) +
                         (std::ldexp(1.0, -20) + std::ldexp(1.0, -23) * std::sqrt(96.0)) * size;
      ASSERT_NEAR(out[i * (c.n + 1) + j], ref, tol) << i << "," << j;
      ASSERT_NEAR(out[i * (c.n + 1) + j] / ref, 1.0, 0.01) << i << "," << j;  // Not wiped out.
    }
  }
}

TEST_F(GemmAmxTest, ThresholdsAndForcingOff) {
  EXPECT_FALSE(gemm_uses_amx(16, 512, 512));  // Matrix-vector path.
  EXPECT_TRUE(gemm_uses_amx(256, 512, 512));
  EXPECT_FALSE(gemm_uses_amx(256, 512, 8));   // Too shallow for a tile.
  ASSERT_TRUE(set_gemm_isa(GemmIsa::kAvx512).ok());
  EXPECT_FALSE(gemm_uses_amx(256, 512, 512));
  EXPECT_STREQ(to_string(GemmIsa::kAmx), "amx");
}

}  // namespace
}  // namespace torchlight::optimized
