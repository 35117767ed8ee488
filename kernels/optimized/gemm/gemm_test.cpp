// gemm against a double-accumulation reference: many shapes (1, primes,
// sizes off the tile grid, k = 0, large k), every operand layout, every
// epilogue, on each instruction set this CPU supports, at 1 and 2 threads.
//
// Tolerance: |got - ref| <= 1e-5 * sqrt(k) * max(1, |ref|), with inputs in
// [-1, 1]. fp32 blocked summation stays far inside it; a dropped or
// doubled term (|a*b| ~ 0.3) or a wrong epilogue does not.
#include "kernels/optimized/gemm/gemm.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/owned_workspace.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::optimized {
namespace {

using ::torchlight::testing::ErrorIs;

// Packing memory for up to 8 threads, more than any test uses.
GemmWorkspace test_workspace() {
  static OwnedGemmWorkspace workspace(8);
  return workspace.get();
}

enum class Layout {
  kRowMajor,     // [rows, cols] with row stride cols (+ padding)
  kColMajor,     // transposed storage (B: linear's weight, "NT")
  kStrided,      // both strides non-unit
};

enum class Addend {
  kNone,
  kRow,        // [n] broadcast over rows (bias): fused path
  kFull,       // [m, n]
  kColumn,     // [m, 1] broadcast over columns
  kScalar,     // [1, 1]
  kInPlace,    // C itself
  kNanIgnored, // NaN everywhere with beta == 0: must not propagate
};

struct Shape {
  int64_t m, n, k;
};

// An operand stored in `layout`, with its logical [rows, cols] values.
struct Operand {
  std::vector<float> storage;
  ConstMatrix view;
  std::vector<double> logical;  // Row-major [rows][cols].
};

Operand make_operand(int64_t rows, int64_t cols, Layout layout, std::mt19937& rng) {
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  Operand op;
  int64_t rs = 0;
  int64_t cs = 0;
  int64_t size = 0;
  switch (layout) {
    case Layout::kRowMajor:
      rs = cols + 3;  // Padded rows: the row stride is honoured.
      cs = 1;
      size = rows * rs;
      break;
    case Layout::kColMajor:
      rs = 1;
      cs = rows + 1;
      size = cols * cs;
      break;
    case Layout::kStrided:
      rs = 2;
      cs = 2 * rows + 1;
      size = cols * cs + 2 * rows;
      break;
  }
  op.storage.assign(static_cast<size_t>(size + 1), std::numeric_limits<float>::quiet_NaN());
  op.logical.resize(static_cast<size_t>(rows * cols));
  for (int64_t r = 0; r < rows; ++r) {
    for (int64_t c = 0; c < cols; ++c) {
      const float v = dist(rng);
      op.storage[static_cast<size_t>(r * rs + c * cs)] = v;
      op.logical[static_cast<size_t>(r * cols + c)] = v;
    }
  }
  op.view = ConstMatrix{op.storage.data(), rs, cs};
  return op;
}

struct Result {
  std::vector<float> c;
  std::vector<double> ref;
  int64_t ldc;
};

// Runs one case and returns C and the reference.
Result run_case(Shape s, Layout a_layout, Layout b_layout, Addend addend, float alpha, float beta,
                uint32_t seed) {
  std::mt19937 rng(seed);
  Operand a = make_operand(s.m, s.k, a_layout, rng);
  Operand b = make_operand(s.k, s.n, b_layout, rng);
  Result r;
  r.ldc = s.n + 2;
  // C starts as garbage (or the in-place addend); padding must survive.
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  r.c.assign(static_cast<size_t>(s.m * r.ldc + 1), 7.0f);
  std::vector<float> addend_storage;
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = s.m;
  p.n = s.n;
  p.k = s.k;
  p.a = a.view;
  p.b = b.view;
  p.c = r.c.data();
  p.ldc = r.ldc;
  p.alpha = alpha;
  p.beta = beta;
  // The addend's logical value at [i][j] (before beta).
  std::vector<double> add(static_cast<size_t>(s.m * s.n), 0.0);
  switch (addend) {
    case Addend::kNone: break;
    case Addend::kRow:
      addend_storage.resize(static_cast<size_t>(s.n) + 1);
      for (auto& v : addend_storage) v = dist(rng);
      p.addend = ConstMatrix{addend_storage.data(), 0, 1};
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) add[i * s.n + j] = addend_storage[j];
      }
      break;
    case Addend::kFull:
      addend_storage.resize(static_cast<size_t>(s.m * s.n) + 1);
      for (auto& v : addend_storage) v = dist(rng);
      p.addend = ConstMatrix{addend_storage.data(), s.n, 1};
      for (int64_t i = 0; i < s.m * s.n; ++i) add[i] = addend_storage[i];
      break;
    case Addend::kColumn:
      addend_storage.resize(static_cast<size_t>(s.m) + 1);
      for (auto& v : addend_storage) v = dist(rng);
      p.addend = ConstMatrix{addend_storage.data(), 1, 0};
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) add[i * s.n + j] = addend_storage[i];
      }
      break;
    case Addend::kScalar:
      addend_storage = {0.625f};
      p.addend = ConstMatrix{addend_storage.data(), 0, 0};
      for (auto& v : add) v = 0.625;
      break;
    case Addend::kInPlace:
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          const float v = dist(rng);
          r.c[i * r.ldc + j] = v;
          add[i * s.n + j] = v;
        }
      }
      p.addend = ConstMatrix{r.c.data(), r.ldc, 1};
      break;
    case Addend::kNanIgnored:
      addend_storage.assign(static_cast<size_t>(s.m * s.n) + 1,
                            std::numeric_limits<float>::quiet_NaN());
      p.addend = ConstMatrix{addend_storage.data(), s.n, 1};
      p.beta = 0.0f;
      break;
  }
  const double beta_used = addend == Addend::kNone || addend == Addend::kNanIgnored ? 0.0 : beta;
  r.ref.assign(static_cast<size_t>(s.m * s.n), 0.0);
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      double acc = 0.0;
      for (int64_t q = 0; q < s.k; ++q) acc += a.logical[i * s.k + q] * b.logical[q * s.n + j];
      double v = alpha == 0.0f ? 0.0 : alpha * acc;
      if (beta_used != 0.0) v += beta_used * add[i * s.n + j];
      r.ref[i * s.n + j] = v;
    }
  }
  const Status status = gemm(p);
  EXPECT_TRUE(status.ok()) << status.message();
  return r;
}

// Checks C against the reference and that the padding columns are intact.
void expect_matches(const Result& r, Shape s) {
  const double scale = 1e-5 * std::sqrt(static_cast<double>(s.k > 0 ? s.k : 1));
  int64_t bad = 0;
  for (int64_t i = 0; i < s.m; ++i) {
    for (int64_t j = 0; j < s.n; ++j) {
      const double ref = r.ref[i * s.n + j];
      const double got = r.c[i * r.ldc + j];
      const double tol = scale * std::fmax(1.0, std::fabs(ref));
      if (!(std::fabs(got - ref) <= tol) && bad++ < 5) {
        ADD_FAILURE() << "C[" << i << "][" << j << "] = " << got << ", expected " << ref
                      << " (tolerance " << tol << ")";
      }
    }
    for (int64_t j = s.n; j < r.ldc && i * r.ldc + j < static_cast<int64_t>(r.c.size()); ++j) {
      if (r.c[i * r.ldc + j] != 7.0f && bad++ < 5) {
        ADD_FAILURE() << "padding C[" << i << "][" << j << "] was overwritten";
      }
    }
  }
  EXPECT_EQ(bad, 0) << "mismatches for m=" << s.m << " n=" << s.n << " k=" << s.k;
}

const Shape kShapes[] = {
    {1, 1, 1},     {1, 7, 13},    {1, 768, 768}, {1, 1000, 1},  {2, 5, 3},     {3, 33, 17},
    {4, 100, 65},  {4, 129, 1},   {5, 37, 29},   {7, 1, 19},    {12, 32, 256}, {13, 33, 257},
    {17, 31, 300}, {24, 64, 16},  {31, 97, 513}, {64, 64, 64},  {100, 130, 70}, {127, 129, 255},
    {200, 1, 37},  {3, 1, 1000},  {0, 5, 5},     {5, 0, 5},     {5, 5, 0},     {145, 1030, 9},
    // Above the parallel thresholds: split by columns, by rows, or both;
    // several packed blocks of rows, columns and depth.
    {130, 200, 300}, {260, 50, 200}, {64, 1000, 40}, {300, 50, 20}, {40, 30, 1100},
    {2, 3000, 700},  {9, 3000, 200}, {16, 700, 300}, {11, 77, 50},
};

const Shape kLargeK[] = {{2, 3, 5000}, {20, 40, 3000}, {1, 50, 4097}};

class GemmTest : public ::testing::TestWithParam<std::tuple<GemmIsa, size_t>> {
 protected:
  void SetUp() override {
    const GemmIsa isa = std::get<0>(GetParam());
    if (!gemm_isa_supported(isa)) GTEST_SKIP() << to_string(isa) << " is not supported here";
    ASSERT_TRUE(set_gemm_isa(isa).ok());
    threadpool::set_num_threads(std::get<1>(GetParam()));
  }
  void TearDown() override {
    reset_gemm_isa();
    threadpool::set_num_threads(0);
  }
};

TEST_P(GemmTest, ActiveIsaIsTheOneForced) {
  EXPECT_EQ(active_gemm_isa(), std::get<0>(GetParam()));
}

TEST_P(GemmTest, AllShapesRowMajorOperands) {
  uint32_t seed = 1;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    expect_matches(run_case(s, Layout::kRowMajor, Layout::kRowMajor, Addend::kNone, 1, 0, seed++),
                   s);
  }
}

TEST_P(GemmTest, AllShapesTransposedWeight) {
  uint32_t seed = 100;
  for (const Shape& s : kShapes) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    expect_matches(run_case(s, Layout::kRowMajor, Layout::kColMajor, Addend::kNone, 1, 0, seed++),
                   s);
  }
}

TEST_P(GemmTest, AllShapesOtherLayouts) {
  uint32_t seed = 200;
  const std::pair<Layout, Layout> layouts[] = {{Layout::kColMajor, Layout::kRowMajor},
                                               {Layout::kStrided, Layout::kStrided},
                                               {Layout::kColMajor, Layout::kColMajor},
                                               {Layout::kStrided, Layout::kColMajor}};
  for (const Shape& s : kShapes) {
    for (const auto& [la, lb] : layouts) {
      SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k
                                        << " layouts " << static_cast<int>(la) << ","
                                        << static_cast<int>(lb));
      expect_matches(run_case(s, la, lb, Addend::kNone, 1, 0, seed++), s);
    }
  }
}

TEST_P(GemmTest, LargeK) {
  uint32_t seed = 300;
  for (const Shape& s : kLargeK) {
    for (Layout lb : {Layout::kRowMajor, Layout::kColMajor}) {
      SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
      expect_matches(run_case(s, Layout::kRowMajor, lb, Addend::kRow, 1, 1, seed++), s);
    }
  }
}

// Prefill-shaped linears (many rows against a transposed weight): whole
// micro-tiles of weight rows and a tail of them, K in one and in two packed
// passes (the second accumulates), a bias and a full addend; at 2 threads
// the column tasks of one row range run as one block.
TEST_P(GemmTest, PrefillShapesTransposedWeight) {
  const Shape shapes[] = {{128, 288, 288}, {131, 294, 301}, {67, 299, 515}, {128, 288, 768}};
  uint32_t seed = 350;
  for (const Shape& s : shapes) {
    for (Addend addend : {Addend::kRow, Addend::kFull}) {
      SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k
                                        << " addend " << static_cast<int>(addend));
      expect_matches(
          run_case(s, Layout::kRowMajor, Layout::kColMajor, addend, 1.0f, 1.0f, seed++), s);
    }
  }
}

TEST_P(GemmTest, EveryEpilogue) {
  const Addend addends[] = {Addend::kRow,    Addend::kFull,    Addend::kColumn,
                            Addend::kScalar, Addend::kInPlace, Addend::kNanIgnored};
  const std::pair<float, float> scales[] = {{1.0f, 1.0f}, {0.5f, -1.5f}, {-2.0f, 0.25f}};
  const Shape shapes[] = {{1, 37, 50},   {3, 64, 8},   {13, 45, 300},
                          {40, 70, 20},  {6, 5, 0},    {70, 100, 400}};
  uint32_t seed = 400;
  for (const Shape& s : shapes) {
    for (Addend addend : addends) {
      for (const auto& [alpha, beta] : scales) {
        for (Layout lb : {Layout::kRowMajor, Layout::kColMajor}) {
          SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k
                                          << " addend " << static_cast<int>(addend) << " alpha "
                                          << alpha << " beta " << beta);
          expect_matches(run_case(s, Layout::kRowMajor, lb, addend, alpha, beta, seed++), s);
        }
      }
    }
  }
}

TEST_P(GemmTest, AlphaZeroIgnoresTheProduct) {
  // NaN in A must not reach C when alpha == 0 (BLAS semantics).
  std::vector<float> a(6, std::numeric_limits<float>::quiet_NaN());
  std::vector<float> b(6, 1.0f);
  std::vector<float> bias = {1.0f, 2.0f};
  std::vector<float> c(6, 9.0f);
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = 3;
  p.n = 2;
  p.k = 2;
  p.a = {a.data(), 2, 1};
  p.b = {b.data(), 2, 1};
  p.c = c.data();
  p.ldc = 2;
  p.alpha = 0.0f;
  p.beta = 3.0f;
  p.addend = {bias.data(), 0, 1};
  ASSERT_TRUE(gemm(p).ok());
  EXPECT_EQ(c, (std::vector<float>{3, 6, 3, 6, 3, 6}));
  p.addend = {};
  ASSERT_TRUE(gemm(p).ok());
  EXPECT_EQ(c, (std::vector<float>(6, 0.0f)));
}

TEST_P(GemmTest, BatchedMatchesOneByOne) {
  // Small items (one per thread) and large ones (each over every thread).
  const Shape shapes[] = {{1, 9, 64}, {7, 16, 33}, {150, 160, 200}};
  std::mt19937 rng(7);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (const Shape& s : shapes) {
    SCOPED_TRACE(::testing::Message() << "m=" << s.m << " n=" << s.n << " k=" << s.k);
    const int64_t batch = 5;
    std::vector<float> a(static_cast<size_t>(batch * s.m * s.k));
    std::vector<float> b(static_cast<size_t>(batch * s.k * s.n));
    for (auto& v : a) v = dist(rng);
    for (auto& v : b) v = dist(rng);
    std::vector<float> c(static_cast<size_t>(batch * s.m * s.n), 0.0f);
    std::vector<float> expected(c.size(), 0.0f);
    GemmProblem p;
    p.workspace = test_workspace();
  p.workspace = test_workspace();
    p.m = s.m;
    p.n = s.n;
    p.k = s.k;
    p.a = {a.data(), s.k, 1};
    p.b = {b.data(), s.n, 1};
    p.c = c.data();
    p.ldc = s.n;
    ASSERT_TRUE(gemm_batched(p, batch, s.m * s.k, s.k * s.n, s.m * s.n).ok());
    for (int64_t item = 0; item < batch; ++item) {
      for (int64_t i = 0; i < s.m; ++i) {
        for (int64_t j = 0; j < s.n; ++j) {
          double acc = 0.0;
          for (int64_t q = 0; q < s.k; ++q) {
            acc += static_cast<double>(a[(item * s.m + i) * s.k + q]) * b[(item * s.k + q) * s.n + j];
          }
          const float got = c[(item * s.m + i) * s.n + j];
          ASSERT_NEAR(got, acc, 1e-5 * std::sqrt(s.k) * std::fmax(1.0, std::fabs(acc)))
              << "item " << item << " [" << i << "][" << j << "]";
        }
      }
    }
  }
}

std::string param_name(const ::testing::TestParamInfo<std::tuple<GemmIsa, size_t>>& info) {
  return std::string(to_string(std::get<0>(info.param))) + "_threads" +
         std::to_string(std::get<1>(info.param));
}

INSTANTIATE_TEST_SUITE_P(IsasAndThreads, GemmTest,
                         ::testing::Combine(::testing::Values(GemmIsa::kPortable, GemmIsa::kAvx2,
                                                          GemmIsa::kAvx512, GemmIsa::kAmx),
                                          ::testing::Values(size_t{1}, size_t{2})),
                         param_name);

TEST(GemmErrorsTest, NegativeSizeIsInvalidArgument) {
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = -1;
  const Status status = gemm(p);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument,
                              "gemm sizes must be non-negative, got m=-1 n=0 k=0"));
  EXPECT_NE(std::string(status.message()).find("m=-1"), std::string::npos) << status.message();
}

TEST(GemmErrorsTest, ShortRowStrideIsInvalidArgument) {
  float a = 1, b = 1, c[4] = {};
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = 2;
  p.n = 2;
  p.k = 1;
  p.a = {&a, 0, 0};
  p.b = {&b, 0, 0};
  p.c = c;
  p.ldc = 1;
  const Status status = gemm(p);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument,
                              "gemm output needs data and a row stride >= n=2, got data"));
  EXPECT_NE(std::string(status.message()).find("ldc=1"), std::string::npos) << status.message();
}

TEST(GemmErrorsTest, NullOperandIsInvalidArgument) {
  float c[4] = {};
  GemmProblem p;
  p.workspace = test_workspace();
  p.m = 2;
  p.n = 2;
  p.k = 3;
  p.c = c;
  p.ldc = 2;
  const Status status = gemm(p);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "gemm operand A is null for m=2 n=2 k=3"));
  EXPECT_NE(std::string(status.message()).find("operand A is null"), std::string::npos)
      << status.message();
  EXPECT_THAT(gemm_batched(p, -2, 0, 0, 0), ErrorIs(Error::kInvalidArgument,
                                                    "gemm batch must be non-negative, got -2"));
}

// gemm packs only in the caller's workspace: without one, a product that
// packs fails with a clear error instead of allocating; with fewer slots
// than threads it uses fewer threads and still gets the right answer.
TEST(GemmWorkspaceTest, PackingNeedsTheCallersWorkspace) {
  const int64_t m = 40, n = 24, k = 32;
  std::vector<float> a(static_cast<size_t>(m * k), 1.0f);
  std::vector<float> b(static_cast<size_t>(k * n), 0.5f);
  std::vector<float> c(static_cast<size_t>(m * n), 0.0f);
  GemmProblem p;
  p.m = m;
  p.n = n;
  p.k = k;
  p.a = {a.data(), k, 1};
  p.b = {b.data(), n, 1};
  p.c = c.data();
  p.ldc = n;
  const Status none = gemm(p);
  EXPECT_THAT(none, ErrorIs(Error::kMemoryAllocationFailed,
                            "gemm has no free packing slot for m=40 n=24 k=32 (its"));
  EXPECT_NE(std::string(none.message()).find("no free packing slot"), std::string::npos)
      << none.message();
  OwnedGemmWorkspace one_slot(1);
  p.workspace = one_slot.get();
  ASSERT_EQ(p.workspace.slots, 1u);
  threadpool::set_num_threads(2);
  ASSERT_TRUE(gemm(p).ok());
  ASSERT_TRUE(gemm_batched(p, 1, 0, 0, 0).ok());
  threadpool::set_num_threads(0);
  for (float v : c) ASSERT_EQ(v, 16.0f);
  EXPECT_EQ(make_gemm_workspace(nullptr, 1 << 30).slots, 0u);
  EXPECT_EQ(gemm_workspace_bytes(3), 3 * gemm_slot_floats() * sizeof(float));
}

TEST(GemmIsaTest, PortableIsAlwaysSupportedAndResetPicksTheBest) {
  EXPECT_TRUE(gemm_isa_supported(GemmIsa::kPortable));
  ASSERT_TRUE(set_gemm_isa(GemmIsa::kPortable).ok());
  EXPECT_EQ(active_gemm_isa(), GemmIsa::kPortable);
  reset_gemm_isa();
  GemmIsa best = GemmIsa::kPortable;
  for (GemmIsa isa : {GemmIsa::kAvx2, GemmIsa::kAvx512, GemmIsa::kAmx}) {
    if (gemm_isa_supported(isa)) best = isa;
  }
  EXPECT_EQ(active_gemm_isa(), best);
  EXPECT_STREQ(to_string(GemmIsa::kAvx512), "avx512");
}

TEST(GemmIsaTest, UnsupportedIsaIsRefusedAndLeavesTheActiveOne) {
  const GemmIsa before = active_gemm_isa();
  for (GemmIsa isa : {GemmIsa::kAvx2, GemmIsa::kAvx512, GemmIsa::kAmx}) {
    if (gemm_isa_supported(isa)) continue;
    const Status status = set_gemm_isa(isa);
    // Each refused set is named (on a CPU without AVX-512, AMX too).
    const std::string reason =
        std::string("gemm instruction set '") + to_string(isa) + "' is not supported by this";
    EXPECT_THAT(status, ErrorIs(Error::kNotSupported, reason.c_str()));
    EXPECT_EQ(active_gemm_isa(), before);
  }
  // An out-of-range value is never supported.
  EXPECT_THAT(set_gemm_isa(static_cast<GemmIsa>(9)),
              ErrorIs(Error::kNotSupported,
                      "gemm instruction set 'unknown' is not supported by this"));
  EXPECT_EQ(active_gemm_isa(), before);
}

}  // namespace
}  // namespace torchlight::optimized
