// aten::mm.out, aten::bmm.out and aten::addmm.out (optimized): values
// against a double reference over layouts and threads, hand-off of other
// dtypes and out layouts to portable, and errors worded as portable's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/matmul_test_util.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::optimized {
namespace {

using ::torchlight::testing::ErrorIs;

using portable::kernel_test::dim_order;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::Layout;
using portable::kernel_test::random_float_values;
using portable::kernel_test::run_kernel;
using portable::kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using test_util::expect_near_all;

constexpr ScalarType kF32 = ScalarType::kFloat;

// Row-major [m, n] product of row-major [m, k] and [k, n] values, in double.
std::vector<double> matmul_ref(const std::vector<double>& a, const std::vector<double>& b,
                               int64_t m, int64_t n, int64_t k) {
  std::vector<double> c(static_cast<size_t>(m * n), 0.0);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double acc = 0.0;
      for (int64_t q = 0; q < k; ++q) acc += a[i * k + q] * b[q * n + j];
      c[i * n + j] = acc;
    }
  }
  return c;
}

Status mm(KernelFunction fn, TestTensor& a, TestTensor& b, TestTensor& out) {
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  return run_kernel(fn, "aten::mm.out", args);
}

Status bmm(KernelFunction fn, TestTensor& a, TestTensor& b, TestTensor& out) {
  KernelArgs args{a.evalue(), b.evalue(), out.evalue(), EValue()};
  return run_kernel(fn, "aten::bmm.out", args);
}

Status addmm(KernelFunction fn, TestTensor& self, TestTensor& a, TestTensor& b, EValue beta,
             EValue alpha, TestTensor& out) {
  KernelArgs args{self.evalue(), a.evalue(), b.evalue(), beta, alpha, out.evalue(), EValue()};
  return run_kernel(fn, "aten::addmm.out", args);
}

class OptimizedMatmulTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

TEST_P(OptimizedMatmulTest, MmMatchesReferenceForShapesAndLayouts) {
  const int64_t shapes[][3] = {{1, 1, 1}, {1, 768, 64}, {3, 5, 7}, {4, 33, 70},
                               {13, 47, 129}, {64, 96, 300}, {130, 20, 3}};
  const std::vector<DimOrderType> orders[] = {{0, 1}, {1, 0}};
  uint32_t seed = 1;
  for (const auto& s : shapes) {
    const int64_t m = s[0], n = s[1], k = s[2];
    for (const auto& a_order : orders) {
      for (const auto& b_order : orders) {
        SCOPED_TRACE(::testing::Message() << m << "x" << n << "x" << k << " a order "
                                        << int(a_order[0]) << " b order " << int(b_order[0]));
        const auto av = random_float_values(m * k, seed++);
        const auto bv = random_float_values(k * n, seed++);
        TestTensor a(kF32, {SizesType(m), SizesType(k)}, av, dim_order(a_order));
        TestTensor b(kF32, {SizesType(k), SizesType(n)}, bv, dim_order(b_order));
        TestTensor out(kF32, {SizesType(m), SizesType(n)});
        ASSERT_TRUE(mm(&mm_out, a, b, out).ok());
        expect_near_all(out.values(), matmul_ref(av, bv, m, n, k), k);
      }
    }
  }
}

TEST_P(OptimizedMatmulTest, MmColumnMajorOutGoesToPortable) {
  TestTensor a(kF32, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor b(kF32, {3, 2}, {7, 8, 9, 10, 11, 12});
  TestTensor out(kF32, {2, 2}, {}, dim_order({1, 0}));
  ASSERT_TRUE(mm(&mm_out, a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(58, 64, 139, 154));
}

TEST_P(OptimizedMatmulTest, BmmMatchesReference) {
  const int64_t shapes[][4] = {{1, 1, 1, 1}, {12, 1, 64, 37}, {3, 17, 9, 65}, {2, 140, 150, 70},
                               {5, 4, 0, 3}};
  uint32_t seed = 50;
  for (const auto& s : shapes) {
    const int64_t batch = s[0], m = s[1], n = s[2], k = s[3];
    for (bool transposed_b : {false, true}) {
      SCOPED_TRACE(::testing::Message() << batch << "x" << m << "x" << n << "x" << k
                                      << (transposed_b ? " transposed b" : ""));
      const auto av = random_float_values(batch * m * k, seed++);
      const auto bv = random_float_values(batch * k * n, seed++);
      TestTensor a(kF32, {SizesType(batch), SizesType(m), SizesType(k)}, av);
      TestTensor b(kF32, {SizesType(batch), SizesType(k), SizesType(n)}, bv,
                   transposed_b ? dim_order({0, 2, 1}) : Layout{});
      TestTensor out(kF32, {SizesType(batch), SizesType(m), SizesType(n)});
      ASSERT_TRUE(bmm(&bmm_out, a, b, out).ok());
      std::vector<double> want;
      for (int64_t item = 0; item < batch; ++item) {
        std::vector<double> ai(av.begin() + item * m * k, av.begin() + (item + 1) * m * k);
        std::vector<double> bi(bv.begin() + item * k * n, bv.begin() + (item + 1) * k * n);
        for (double v : matmul_ref(ai, bi, m, n, k)) want.push_back(v);
      }
      expect_near_all(out.values(), want, k);
    }
  }
}

TEST_P(OptimizedMatmulTest, AddmmBroadcastsSelfWithBetaAndAlpha) {
  const int64_t m = 9, n = 40, k = 33;
  const auto av = random_float_values(m * k, 7);
  const auto bv = random_float_values(k * n, 8);
  const auto product = matmul_ref(av, bv, m, n, k);
  const std::vector<std::vector<SizesType>> self_shapes = {{n}, {1, n}, {m, n}, {m, 1}, {1}, {}};
  for (const auto& self_shape : self_shapes) {
    for (bool transposed_b : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "self rank " << self_shape.size() << " numel shape "
                                      << (self_shape.empty() ? 0 : self_shape.back())
                                      << (transposed_b ? " transposed b" : ""));
      int64_t numel = 1;
      for (SizesType s : self_shape) numel *= s;
      const auto sv = random_float_values(numel, 9);
      TestTensor self(kF32, self_shape, sv);
      TestTensor a(kF32, {m, k}, av);
      TestTensor b(kF32, {k, n}, bv, transposed_b ? dim_order({1, 0}) : Layout{});
      TestTensor out(kF32, {m, n});
      ASSERT_TRUE(addmm(&addmm_out, self, a, b, EValue(0.5), EValue(int64_t{-2}), out).ok());
      std::vector<double> want(product.size());
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double s = 0;
          if (self_shape.size() == 2) {
            s = sv[(self_shape[0] == 1 ? 0 : i) * self_shape[1] + (self_shape[1] == 1 ? 0 : j)];
          } else if (self_shape.size() == 1) {
            s = sv[self_shape[0] == 1 ? 0 : j];
          } else {
            s = sv[0];
          }
          want[i * n + j] = 0.5 * s - 2.0 * product[i * n + j];
        }
      }
      expect_near_all(out.values(), want, k);
    }
  }
}

TEST_P(OptimizedMatmulTest, AddmmBetaZeroIgnoresNanSelfAlphaZeroIgnoresNanProduct) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  TestTensor self(kF32, {2}, {nan, nan});
  TestTensor a(kF32, {1, 2}, {1, 2});
  TestTensor b(kF32, {2, 2}, {1, 2, 3, 4});
  TestTensor out(kF32, {1, 2});
  ASSERT_TRUE(addmm(&addmm_out, self, a, b, EValue(0.0), EValue(1.0), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(7, 10));

  TestTensor self2(kF32, {2}, {1, 2});
  TestTensor nan_a(kF32, {1, 2}, {nan, nan});
  ASSERT_TRUE(addmm(&addmm_out, self2, nan_a, b, EValue(3.0), EValue(0.0), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(3, 6));
}

INSTANTIATE_TEST_SUITE_P(Threads, OptimizedMatmulTest, ::testing::Values(size_t{1}, size_t{2}));

TEST(OptimizedMatmulDelegationTest, NonFloatDtypesUsePortableSemantics) {
  TestTensor a(ScalarType::kChar, {1, 2}, {100, 100});
  TestTensor b(ScalarType::kChar, {2, 1}, {2, 1});
  TestTensor out(ScalarType::kChar, {1, 1});
  ASSERT_TRUE(mm(&mm_out, a, b, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(44));  // 300 mod 256, as torch.mm.

  TestTensor ha(ScalarType::kHalf, {1, 2, 2}, {1, 2, 3, 4});
  TestTensor hb(ScalarType::kHalf, {1, 2, 1}, {1, 1});
  TestTensor hout(ScalarType::kHalf, {1, 2, 1});
  ASSERT_TRUE(bmm(&bmm_out, ha, hb, hout).ok());
  EXPECT_THAT(hout.values(), ElementsAre(3, 7));

  TestTensor is(ScalarType::kInt, {1}, {5});
  TestTensor ia(ScalarType::kInt, {1, 1}, {2});
  TestTensor ib(ScalarType::kInt, {1, 1}, {3});
  TestTensor iout(ScalarType::kInt, {1, 1});
  ASSERT_TRUE(addmm(&addmm_out, is, ia, ib, EValue(int64_t{2}), EValue(int64_t{1}), iout).ok());
  EXPECT_THAT(iout.values(), ElementsAre(16));
}

// The optimized kernel and the portable one must fail with the same message.
template <typename Call>
void expect_same_error(Call call) {
  const Status optimized = call(true);
  const Status portable = call(false);
  EXPECT_FALSE(optimized.ok());
  EXPECT_EQ(optimized.code(), portable.code());
  EXPECT_STREQ(optimized.message(), portable.message());
}

TEST(OptimizedMatmulErrorsTest, ShapeMismatchNamesBothShapes) {
  TestTensor a(kF32, {2, 3});
  TestTensor b(kF32, {4, 2});
  TestTensor out(kF32, {2, 2});
  const Status status = mm(&mm_out, a, b, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::mm.out"));
  EXPECT_THAT(status.message(), HasSubstr("[2, 3]"));
  EXPECT_THAT(status.message(), HasSubstr("[4, 2]"));
  expect_same_error([&](bool opt) { return mm(opt ? &mm_out : &portable::mm_out, a, b, out); });
}

TEST(OptimizedMatmulErrorsTest, ErrorsMatchPortable) {
  TestTensor m3(kF32, {2, 3, 4});
  TestTensor m2(kF32, {4, 2});
  TestTensor out2(kF32, {2, 2});
  expect_same_error([&](bool opt) { return mm(opt ? &mm_out : &portable::mm_out, m3, m2, out2); });

  TestTensor ints(ScalarType::kInt, {2, 4});
  expect_same_error(
      [&](bool opt) { return mm(opt ? &mm_out : &portable::mm_out, m2, ints, out2); });

  TestTensor wrong_out(ScalarType::kDouble, {4, 4});
  TestTensor sq(kF32, {4, 4});
  expect_same_error(
      [&](bool opt) { return mm(opt ? &mm_out : &portable::mm_out, sq, sq, wrong_out); });

  TestTensor static_out(kF32, {3, 3});
  expect_same_error(
      [&](bool opt) { return mm(opt ? &mm_out : &portable::mm_out, sq, sq, static_out); });

  TestTensor b1(kF32, {2, 3, 4});
  TestTensor b2(kF32, {3, 4, 5});
  TestTensor bout(kF32, {2, 3, 5});
  expect_same_error(
      [&](bool opt) { return bmm(opt ? &bmm_out : &portable::bmm_out, b1, b2, bout); });

  TestTensor self(kF32, {3});
  TestTensor a(kF32, {2, 4});
  TestTensor b(kF32, {4, 5});
  TestTensor aout(kF32, {2, 5});
  expect_same_error([&](bool opt) {
    return addmm(opt ? &addmm_out : &portable::addmm_out, self, a, b, EValue(1.0), EValue(1.0),
                 aout);
  });
  TestTensor dself(ScalarType::kDouble, {5});
  expect_same_error([&](bool opt) {
    return addmm(opt ? &addmm_out : &portable::addmm_out, dself, a, b, EValue(1.0), EValue(1.0),
                 aout);
  });

  KernelArgs too_few{a.evalue(), b.evalue(), EValue()};
  KernelArgs too_few_again{a.evalue(), b.evalue(), EValue()};
  const Status optimized = run_kernel(&mm_out, "aten::mm.out", too_few);
  const Status portable = run_kernel(&portable::mm_out, "aten::mm.out", too_few_again);
  EXPECT_EQ(optimized.code(), portable.code());
  EXPECT_STREQ(optimized.message(), portable.message());
}

}  // namespace
}  // namespace torchlight::optimized
