// The prepared add/sub/mul/div paths (arith_fast_path.h): prepare installs
// them only for float/double tensors in the default dim order, and every
// call gives bit-identical results to the reference kernel, including the
// calls the fast eval hands back to it (broadcasting, resizing, Bool or
// out-of-range scalars, a Scalar whose kind changed since load).
#include "kernels/portable/util/arith_fast_path.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::KernelArgs;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

// What prepare installed for `args`, a call the schema accepts (the
// runtime checks that before prepare; the evals below trust it).
KernelFunction prepared_eval(const Kernel& kernel, KernelArgs& args) {
  EXPECT_NE(kernel.prepare, nullptr) << kernel.name;
  const kernel_test::Prepared prepared = kernel_test::prepare_like_loader(kernel, args);
  EXPECT_TRUE(prepared.status.ok()) << prepared.status.message();
  return prepared.eval;
}

std::vector<double> random_values(size_t n, unsigned seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> dist(-4.0, 4.0);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng);
  return v;
}

bool same_bits(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  return x.nbytes() == y.nbytes() && std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

struct Case {
  const char* op;
  bool scalar_other;
  bool has_alpha;
};
constexpr Case kCases[] = {
    {"aten::add.out", false, true},         {"aten::add.Scalar_out", true, true},
    {"aten::sub.out", false, true},         {"aten::sub.Scalar_out", true, true},
    {"aten::mul.out", false, false},        {"aten::mul.Scalar_out", true, false},
    {"aten::div.out", false, false},        {"aten::div.Scalar_out", true, false},
};

// Runs `c` through the prepared eval and the reference on fresh outputs of
// the same inputs and compares the bits. `other_sizes` shapes a tensor
// `other`; `other_scalar` and `alpha` are the Scalar arguments.
void expect_identical(const Case& c, ScalarType dtype, std::vector<SizesType> sizes,
                      std::vector<SizesType> other_sizes, EValue other_scalar, EValue alpha,
                      bool expect_fast, std::vector<SizesType> out_sizes = {}) {
  SCOPED_TRACE(std::string(c.op) + " " + to_string(dtype));
  const Kernel& kernel = kernel_test::portable_kernel_named(c.op);
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  int64_t other_n = 1;
  for (SizesType s : other_sizes) other_n *= s;
  TestTensor self(dtype, sizes, random_values(static_cast<size_t>(n), 1));
  TestTensor other(dtype, other_sizes, random_values(static_cast<size_t>(other_n), 2));
  if (out_sizes.empty()) out_sizes = sizes;
  TestTensor fast_out(dtype, out_sizes, {}, kernel_test::dynamic_bound());
  TestTensor reference_out(dtype, out_sizes, {}, kernel_test::dynamic_bound());
  auto make_args = [&](TestTensor& out) {
    const EValue second = c.scalar_other ? other_scalar : other.evalue();
    if (c.has_alpha) {
      return std::make_unique<KernelArgs>(
          std::initializer_list<EValue>{self.evalue(), second, alpha, out.evalue(), EValue()});
    }
    return std::make_unique<KernelArgs>(
        std::initializer_list<EValue>{self.evalue(), second, out.evalue(), EValue()});
  };
  auto fast_args = make_args(fast_out);
  auto reference_args = make_args(reference_out);
  const KernelFunction eval = prepared_eval(kernel, *fast_args);
  EXPECT_EQ(eval != kernel.eval, expect_fast);
  KernelContext fast_ctx(nullptr, nullptr, c.op);
  eval(fast_ctx, fast_args->span());
  KernelContext reference_ctx(nullptr, nullptr, c.op);
  kernel.eval(reference_ctx, reference_args->span());
  ASSERT_EQ(fast_ctx.failed(), reference_ctx.failed()) << reference_ctx.status().message();
  if (reference_ctx.failed()) {
    EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
    return;
  }
  EXPECT_TRUE(same_bits(fast_out, reference_out));
  const size_t out_slot = c.has_alpha ? 3 : 2;
  EXPECT_TRUE((*fast_args)[out_slot + 1].is_tensor());  // The return slot names out.
}

TEST(ArithFastPathTest, FloatAndDoubleSameShapeTakeTheFastPathWithIdenticalResults) {
  for (const Case& c : kCases) {
    for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble}) {
      expect_identical(c, dtype, {3, 5}, {3, 5}, EValue(2.5), EValue(int64_t{1}), true);
      expect_identical(c, dtype, {3, 5}, {3, 5}, EValue(int64_t{-3}), EValue(0.75), true);
      expect_identical(c, dtype, {0}, {0}, EValue(int64_t{2}), EValue(int64_t{2}), true);
    }
  }
}

TEST(ArithFastPathTest, OneElementOtherBroadcastsOnTheFastPath) {
  for (const Case& c : kCases) {
    if (c.scalar_other) continue;
    expect_identical(c, ScalarType::kFloat, {4, 3}, {1}, EValue(), EValue(int64_t{2}), true);
    expect_identical(c, ScalarType::kFloat, {4, 3}, {}, EValue(), EValue(int64_t{2}), true);
    expect_identical(c, ScalarType::kFloat, {4, 3}, {3}, EValue(), EValue(int64_t{2}), true);
  }
}

// Broadcasting shapes run on the fast eval's runs (a vector run, a
// broadcast value along the run, or strided) with the reference's bits, out
// resized to the broadcast shape; shapes that do not broadcast get the
// reference's error.
TEST(ArithFastPathTest, BroadcastingShapesGiveTheReferenceBits) {
  struct Shapes {
    std::vector<SizesType> self, other, out;
  };
  const Shapes kShapes[] = {
      {{1, 8, 3, 5}, {1, 8, 1, 5}, {1, 8, 3, 5}},  // Upstream's RoPE tables.
      {{4, 1, 5}, {3, 1}, {4, 3, 5}},
      {{3}, {4, 3}, {4, 3}},        // self is the smaller one.
      {{2, 1}, {1, 3}, {2, 3}},     // Both broadcast: an outer product.
      {{5, 7}, {5, 1}, {5, 7}},     // other is one value along each run.
      {{5, 1}, {5, 7}, {5, 7}},     // self is.
      {{2, 3, 1}, {2, 1, 1}, {2, 3, 1}},
      {{0, 3}, {1, 3}, {0, 3}},
      {{2, 3}, {4}, {2, 3}},        // Does not broadcast: the reference's error.
  };
  for (const Case& c : kCases) {
    if (c.scalar_other) continue;
    for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble}) {
      for (const Shapes& shapes : kShapes) {
        expect_identical(c, dtype, shapes.self, shapes.other, EValue(), EValue(0.5), true,
                         shapes.out);
      }
    }
  }
}

// The optimized float32 kernels split the runs over the pool: every split of
// a broadcast call gives the serial bits.
// A Split policy that runs the loop three times, each cut in two elsewhere.
struct CutInTwo {
  template <typename Loop>
  static void run(int64_t n, int64_t, const Loop& loop) {
    for (int64_t cut : {n / 3, n / 2, n - 1}) {
      loop(int64_t{0}, cut);
      loop(cut, n);
    }
  }
};

TEST(ArithFastPathTest, BroadcastRunsSplitAnywhereGiveTheSameBits) {
  const Kernel& mul = kernel_test::portable_kernel_named("aten::mul.out");
  TestTensor self(ScalarType::kFloat, {2, 7, 3, 5}, random_values(210, 3));
  TestTensor other(ScalarType::kFloat, {1, 7, 1, 5}, random_values(35, 4));
  TestTensor split_out(ScalarType::kFloat, {2, 7, 3, 5});
  TestTensor serial_out(ScalarType::kFloat, {2, 7, 3, 5});
  KernelArgs split_args{self.evalue(), other.evalue(), split_out.evalue(), EValue()};
  KernelArgs serial_args{self.evalue(), other.evalue(), serial_out.evalue(), EValue()};
  KernelContext ctx(nullptr, nullptr, "aten::mul.out");
  arith_fast_path::fast_eval<float, arith_fast_path::kMulOut, mul_out, CutInTwo>(ctx,
                                                                              split_args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  mul.eval(ctx, serial_args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_TRUE(same_bits(split_out, serial_out));
}

// out planned over self, which has out's shape: each position is read
// before it is written, so the broadcast runs may work in place.
TEST(ArithFastPathTest, BroadcastIntoSelfOfOutsShapeWorksInPlace) {
  const Kernel& add = kernel_test::portable_kernel_named("aten::add.out");
  TestTensor self(ScalarType::kFloat, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor row(ScalarType::kFloat, {3}, {10, 20, 30});
  KernelArgs args{self.evalue(), row.evalue(), EValue(int64_t{1}), self.evalue(), EValue()};
  const KernelFunction eval = prepared_eval(add, args);
  ASSERT_NE(eval, add.eval);
  KernelContext ctx(nullptr, nullptr, "aten::add.out");
  eval(ctx, args.span());  // out is self (same shape): in place is fine.
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(self.values(), std::vector<double>({11, 22, 33, 14, 25, 36}));
}

TEST(ArithFastPathTest, ScalarsTheFastPathCannotHoldGoBackToTheReference) {
  for (const Case& c : kCases) {
    // A Bool Scalar: an error for sub, promotion rules elsewhere.
    expect_identical(c, ScalarType::kFloat, {2, 2}, {2, 2}, EValue(true), EValue(true), true);
    // An alpha too large for float: the reference reports the overflow.
    expect_identical(c, ScalarType::kFloat, {2, 2}, {2, 2}, EValue(1e300), EValue(1e300), true);
  }
}

TEST(ArithFastPathTest, OtherDtypesAndLayoutsKeepTheReferenceKernel) {
  for (const Case& c : kCases) {
    for (ScalarType dtype : {ScalarType::kInt, ScalarType::kLong, ScalarType::kHalf}) {
      expect_identical(c, dtype, {2, 3}, {2, 3}, EValue(int64_t{2}), EValue(int64_t{1}), false);
    }
  }
  const Kernel& add = kernel_test::portable_kernel_named("aten::add.out");
  kernel_test::Layout channels_last = kernel_test::dim_order({0, 2, 3, 1});
  TestTensor self(ScalarType::kFloat, {1, 2, 2, 2}, {}, channels_last);
  TestTensor other(ScalarType::kFloat, {1, 2, 2, 2});
  TestTensor out(ScalarType::kFloat, {1, 2, 2, 2});
  KernelArgs args{self.evalue(), other.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  EXPECT_EQ(prepared_eval(add, args), add.eval);
  // Mixed dtypes (float + double into double) stay on the reference too.
  TestTensor f(ScalarType::kFloat, {2});
  TestTensor d(ScalarType::kDouble, {2});
  TestTensor d_out(ScalarType::kDouble, {2});
  KernelArgs mixed{f.evalue(), d.evalue(), EValue(int64_t{1}), d_out.evalue(), EValue()};
  EXPECT_EQ(prepared_eval(add, mixed), add.eval);
}

TEST(ArithFastPathTest, ResizedInputsResizeOut) {
  const Kernel& mul = kernel_test::portable_kernel_named("aten::mul.out");
  TestTensor self(ScalarType::kFloat, {4}, {1, 2, 3, 4}, kernel_test::dynamic_bound());
  TestTensor other(ScalarType::kFloat, {4}, {2, 2, 2, 2}, kernel_test::dynamic_bound());
  TestTensor out(ScalarType::kFloat, {4}, {}, kernel_test::dynamic_bound());
  KernelArgs args{self.evalue(), other.evalue(), out.evalue(), EValue()};
  const KernelFunction eval = prepared_eval(mul, args);
  ASSERT_NE(eval, mul.eval);
  // A later run with smaller inputs (a dynamic dim): out must follow.
  const SizesType two[] = {2};
  ASSERT_TRUE(self.impl().resize({two, 1}).ok());
  ASSERT_TRUE(other.impl().resize({two, 1}).ok());
  KernelContext ctx(nullptr, nullptr, "aten::mul.out");
  eval(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(out.sizes(), std::vector<SizesType>({2}));
  EXPECT_EQ(out.values(), std::vector<double>({2, 4}));
  // And back to the planned size (an LLM's decode steps, then a prefill).
  const SizesType four[] = {4};
  ASSERT_TRUE(self.impl().resize({four, 1}).ok());
  ASSERT_TRUE(other.impl().resize({four, 1}).ok());
  eval(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(out.sizes(), std::vector<SizesType>({4}));
  EXPECT_EQ(out.values(), std::vector<double>({2, 4, 6, 8}));
}

// An out that cannot take the result's shape (static, other sizes) gets
// the reference kernel's error, not a write.
TEST(ArithFastPathTest, StaticOutOfAnotherShapeReportsTheReferenceError) {
  const Kernel& add = kernel_test::portable_kernel_named("aten::add.out");
  TestTensor self(ScalarType::kFloat, {4}, {1, 2, 3, 4}, kernel_test::dynamic_bound());
  TestTensor other(ScalarType::kFloat, {4}, {2, 2, 2, 2}, kernel_test::dynamic_bound());
  TestTensor out(ScalarType::kFloat, {4}, {7, 7, 7, 7});
  KernelArgs args{self.evalue(), other.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  const KernelFunction eval = prepared_eval(add, args);
  ASSERT_NE(eval, add.eval);
  const SizesType two[] = {2};
  ASSERT_TRUE(self.impl().resize({two, 1}).ok());
  ASSERT_TRUE(other.impl().resize({two, 1}).ok());
  KernelContext fast_ctx(nullptr, nullptr, "aten::add.out");
  eval(fast_ctx, args.span());
  KernelContext reference_ctx(nullptr, nullptr, "aten::add.out");
  add.eval(reference_ctx, args.span());
  ASSERT_TRUE(fast_ctx.failed());
  EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
  EXPECT_EQ(out.values(), std::vector<double>({7, 7, 7, 7}));
}

TEST(ArithFastPathTest, ScalarKindChangedSinceLoadStillComputesCorrectly) {
  // A Scalar argument a previous instruction computes may be an Int at load
  // and a Double when the kernel runs.
  const Kernel& add = kernel_test::portable_kernel_named("aten::add.Scalar_out");
  TestTensor self(ScalarType::kFloat, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kFloat, {3});
  KernelArgs args{self.evalue(), EValue(int64_t{1}), EValue(int64_t{1}), out.evalue(), EValue()};
  const KernelFunction eval = prepared_eval(add, args);
  args[1] = EValue(0.5);
  KernelContext ctx(nullptr, nullptr, "aten::add.Scalar_out");
  eval(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(out.values(), std::vector<double>({1.5, 2.5, 3.5}));
}

}  // namespace
}  // namespace torchlight::portable
