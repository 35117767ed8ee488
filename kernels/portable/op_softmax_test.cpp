// _softmax.out and _log_softmax.out's prepare step: along the last dim of
// dense tensors it installs a row loop that gives the reference eval's bytes
// (every float dtype, NaN and infinities, empty and dynamic shapes); other
// dims keep the reference; what the program fixes (half_to_float, dim, the
// dtypes) is rejected at load with the reference's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using kernel_test::KernelArgs;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using ::torchlight::testing::ErrorIs;

constexpr const char* kOps[] = {"aten::_softmax.out", "aten::_log_softmax.out"};

std::vector<double> values(size_t n) {
  static const double kValues[] = {0.5, -3.25, 7, 1e-3, -1e4, 2, INFINITY, -INFINITY, 88.5, -0.0};
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kValues[(i * 7) % 10] + static_cast<double>(i % 3);
  if (n > 11) v[11] = NAN;  // One row with a NaN.
  return v;
}

bool same_bytes(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  return x.nbytes() == y.nbytes() &&
         (x.nbytes() == 0 || std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0);
}

// Runs `name` on self (`dtype`, `sizes`) along `dim` through what prepare
// installs and through the reference; returns whether prepare installed
// another eval.
bool expect_same_as_reference(const char* name, ScalarType dtype, std::vector<SizesType> sizes,
                              int64_t dim, kernel_test::Layout layout = {}) {
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  TestTensor self(dtype, sizes, values(static_cast<size_t>(n)), layout);
  TestTensor fast_out(dtype, sizes, {}, layout);
  TestTensor reference_out(dtype, sizes, {}, layout);
  KernelArgs fast{self.evalue(), EValue(dim), EValue(false), fast_out.evalue(), EValue()};
  KernelArgs reference{self.evalue(), EValue(dim), EValue(false), reference_out.evalue(), EValue()};
  const Kernel& kernel = portable_kernel_named(name);
  const Prepared p = prepare_like_loader(kernel, fast);
  EXPECT_TRUE(p.status.ok()) << p.status.message();
  KernelContext fast_ctx(nullptr, nullptr, name);
  KernelContext reference_ctx(nullptr, nullptr, name);
  p.eval(fast_ctx, fast.span());
  kernel.eval(reference_ctx, reference.span());
  EXPECT_FALSE(fast_ctx.failed()) << fast_ctx.status().message();
  EXPECT_FALSE(reference_ctx.failed()) << reference_ctx.status().message();
  EXPECT_TRUE(same_bytes(fast_out, reference_out));
  return p.eval != kernel.eval;
}

TEST(SoftmaxPrepareTest, LastDimRowsMatchTheReferenceBitForBit) {
  for (const char* name : kOps) {
    for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kHalf,
                             ScalarType::kBFloat16}) {
      SCOPED_TRACE(std::string(name) + " " + to_string(dtype));
      EXPECT_TRUE(expect_same_as_reference(name, dtype, {3, 5}, -1));
      EXPECT_TRUE(expect_same_as_reference(name, dtype, {2, 3, 7}, 2));
      EXPECT_TRUE(expect_same_as_reference(name, dtype, {1}, 0));
      EXPECT_TRUE(expect_same_as_reference(name, dtype, {4, 0}, 1));
      EXPECT_TRUE(expect_same_as_reference(name, dtype, {0, 4}, -1));
      // Another dim, a 0-d tensor or a permuted layout: the reference.
      EXPECT_FALSE(expect_same_as_reference(name, dtype, {3, 5}, 0));
      EXPECT_FALSE(expect_same_as_reference(name, dtype, {}, 0));
      EXPECT_FALSE(expect_same_as_reference(name, dtype, {2, 3, 4}, -1,
                                            kernel_test::dim_order({0, 2, 1})));
    }
  }
}

TEST(SoftmaxPrepareTest, DynamicRowsResizeOutOnThePreparedPath) {
  TestTensor self(ScalarType::kFloat, {4, 3}, values(12), kernel_test::dynamic_bound());
  TestTensor out(ScalarType::kFloat, {4, 3}, {}, kernel_test::dynamic_bound());
  KernelArgs args{self.evalue(), EValue(int64_t{-1}), EValue(false), out.evalue(), EValue()};
  const Kernel& kernel = portable_kernel_named("aten::_softmax.out");
  const Prepared p = prepare_like_loader(kernel, args);
  ASSERT_TRUE(p.status.ok());
  ASSERT_NE(p.eval, kernel.eval);
  const SizesType two[] = {2, 3};
  ASSERT_TRUE(self.impl().resize({two, 2}).ok());
  KernelContext ctx(nullptr, nullptr, "aten::_softmax.out");
  p.eval(ctx, args.span());
  ASSERT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(out.sizes(), std::vector<SizesType>({2, 3}));
  // Row 0 as the kernel computes it: in double, rounded once.
  const std::vector<double> x = {self.get(0), self.get(1), self.get(2)};
  const double m = std::max(x[0], std::max(x[1], x[2]));
  const double sum = std::exp(x[0] - m) + std::exp(x[1] - m) + std::exp(x[2] - m);
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(out.get(i), static_cast<double>(static_cast<float>(std::exp(x[i] - m) / sum)));
  }
}

TEST(SoftmaxPrepareTest, WhatTheProgramFixesIsRejectedAtPrepare) {
  TestTensor f(ScalarType::kFloat, {2, 3}, values(6));
  TestTensor f_out(ScalarType::kFloat, {2, 3});
  TestTensor d_out(ScalarType::kDouble, {2, 3});
  TestTensor i(ScalarType::kInt, {2, 3});
  TestTensor i_out(ScalarType::kInt, {2, 3});
  struct Case {
    TestTensor* self;
    int64_t dim;
    bool half_to_float;
    TestTensor* out;
    Error code;
    const char* reason;
  };
  const Case cases[] = {
      {&f, 1, true, &f_out, Error::kNotSupported, "argument 'half_to_float' is true"},
      {&f, 2, false, &f_out, Error::kInvalidArgument, "argument 'dim': dim 2 is out of range"},
      {&f, -1, false, &d_out, Error::kInvalidType, "argument 'out'"},
      {&i, -1, false, &i_out, Error::kInvalidType, "argument 'self' has dtype int32"},
  };
  for (const char* name : kOps) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(name) + " " + c.reason);
      KernelArgs args{c.self->evalue(), EValue(c.dim), EValue(c.half_to_float), c.out->evalue(),
                      EValue()};
      const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
      EXPECT_THAT(p.status, ErrorIs(c.code, c.reason));
      KernelContext ctx(nullptr, nullptr, name);
      portable_kernel_named(name).eval(ctx, args.span());
      EXPECT_THAT(ctx.status(), ErrorIs(c.code, c.reason));
    }
  }
}

}  // namespace
}  // namespace torchlight::portable
