// The pooling kernels: max_pool2d/3d_with_indices, avg_pool1d/2d/3d,
// adaptive average pooling 1d/2d/3d and adaptive_max_pool2d. Hand-checked
// windows and indices, NaN, padding and ceil_mode rules, and errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;

std::vector<double> iota(int n) {
  std::vector<double> v;
  for (int i = 0; i < n; ++i) v.push_back(i);
  return v;
}

Status max_pool(TestTensor& self, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                std::vector<int64_t> padding, std::vector<int64_t> dilation, bool ceil_mode,
                TestTensor& out, TestTensor& indices) {
  IntListArg k(kernel), s(stride), p(padding), d(dilation);
  KernelArgs args{self.evalue(), k.evalue(),        s.evalue(),       p.evalue(), d.evalue(),
                  EValue(ceil_mode), out.evalue(), indices.evalue(), EValue()};
  return run_kernel(&max_pool2d_with_indices_out, "aten::max_pool2d_with_indices.out", args);
}

Status avg_pool(TestTensor& self, std::vector<int64_t> kernel, std::vector<int64_t> stride,
                std::vector<int64_t> padding, bool ceil_mode, bool count_include_pad,
                EValue divisor, TestTensor& out) {
  IntListArg k(kernel), s(stride), p(padding);
  KernelArgs args{self.evalue(),        k.evalue(), s.evalue(), p.evalue(), EValue(ceil_mode),
                  EValue(count_include_pad), divisor,   out.evalue(), EValue()};
  return run_kernel(&avg_pool2d_out, "aten::avg_pool2d.out", args);
}

TEST(OpMaxPool2dTest, MaximaAndFlatIndices) {
  TestTensor self(kF32, {1, 1, 4, 4}, {1, 5, 2, 0,  //
                                       3, 4, 8, 7,  //
                                       0, 0, 1, 1,  //
                                       9, 0, 1, 2});
  TestTensor out(kF32, {1, 1, 2, 2});
  TestTensor indices(kI64, {1, 1, 2, 2});
  ASSERT_TRUE(max_pool(self, {2, 2}, {}, {0}, {1}, false, out, indices).ok());
  EXPECT_THAT(out.values(), ElementsAre(5, 8, 9, 2));
  EXPECT_THAT(indices.values(), ElementsAre(1, 6, 12, 15));
}

TEST(OpMaxPool2dTest, NanWinsAndPaddingIsNeverChosen) {
  TestTensor self(kF32, {1, 2, 2}, {NAN, 1, 2, NAN});  // 3-D input.
  TestTensor out(kF32, {1, 1, 1});
  TestTensor indices(kI64, {1, 1, 1});
  ASSERT_TRUE(max_pool(self, {2}, {2}, {0}, {1}, false, out, indices).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(indices.get(0), 3);  // The last NaN, as ATen.

  // -inf everywhere, padding 1: the first real element is reported.
  TestTensor low(kF32, {1, 1, 2, 2}, {-INFINITY, -INFINITY, -INFINITY, -INFINITY});
  TestTensor out2(kF32, {1, 1, 2, 2});
  TestTensor indices2(kI64, {1, 1, 2, 2});
  ASSERT_TRUE(max_pool(low, {2, 2}, {2, 2}, {1, 1}, {1}, false, out2, indices2).ok());
  EXPECT_THAT(indices2.values(), ElementsAre(0, 1, 2, 3));
}

TEST(OpMaxPool2dTest, DilationAndCeilMode) {
  TestTensor self(kF32, {1, 1, 1, 5}, {1, 9, 2, 8, 3});
  TestTensor out(kF32, {1, 1, 1, 2});
  TestTensor indices(kI64, {1, 1, 1, 2});
  // Kernel 2 with dilation 2 over width 5, stride 2, ceil_mode: windows
  // {0, 2} and {2, 4}.
  ASSERT_TRUE(max_pool(self, {1, 2}, {1, 2}, {0}, {1, 2}, true, out, indices).ok());
  EXPECT_THAT(out.values(), ElementsAre(2, 3));
  EXPECT_THAT(indices.values(), ElementsAre(2, 4));
}

TEST(OpMaxPool2dTest, ChannelsLastOut) {
  TestTensor self(kF32, {1, 2, 2, 2}, {1, 2, 3, 4, 8, 7, 6, 5}, dim_order({0, 2, 3, 1}));
  TestTensor out(kF32, {1, 2, 1, 1}, {}, dim_order({0, 2, 3, 1}));
  TestTensor indices(kI64, {1, 2, 1, 1}, {}, dim_order({0, 2, 3, 1}));
  ASSERT_TRUE(max_pool(self, {2, 2}, {}, {0}, {1}, false, out, indices).ok());
  EXPECT_THAT(out.values(), ElementsAre(4, 8));
  EXPECT_THAT(indices.values(), ElementsAre(3, 0));
}

TEST(OpMaxPool2dTest, Errors) {
  TestTensor self(kF32, {1, 1, 5, 5});
  TestTensor out(kF32, {1, 1, 2, 2});
  TestTensor indices(kI64, {1, 1, 2, 2});
  Status s = max_pool(self, {3, 3}, {}, {2}, {1}, false, out, indices);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::max_pool2d_with_indices.out: argument 'padding' has 2 "
                         "at dimension 0, expected 0 to half the kernel size 3"));

  TestTensor small(kF32, {1, 1, 2, 2});
  s = max_pool(small, {3, 3}, {}, {0}, {1}, false, out, indices);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'kernel_size' (3 at dimension 0, dilation 1"));
  EXPECT_THAT(s.message(), HasSubstr("is larger than the input: argument 'self' of shape "
                                     "[1, 1, 2, 2]"));

  TestTensor no_channels(kF32, {1, 0, 4, 4});
  s = max_pool(no_channels, {2, 2}, {}, {0}, {1}, false, out, indices);
  EXPECT_THAT(s.message(), HasSubstr("argument 'self' has shape [1, 0, 4, 4]"));

  TestTensor int_indices(ScalarType::kInt, {1, 1, 2, 2});
  s = max_pool(self, {2, 2}, {}, {0}, {1}, false, out, int_indices);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "argument 'indices' has dtype int32, expected int64"));
}

TEST(OpAvgPool2dTest, CountIncludePadAndDivisorOverride) {
  TestTensor self(kF32, {1, 1, 2, 2}, {1, 2, 3, 4});
  TestTensor out(kF32, {1, 1, 2, 2});
  // Kernel 2, stride 1, padding 1 (output 3x3 would need stride 1; use
  // stride 2: windows at -1 and 1).
  ASSERT_TRUE(avg_pool(self, {2, 2}, {2, 2}, {1, 1}, false, true, EValue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0.25, 0.5, 0.75, 1.0));
  ASSERT_TRUE(avg_pool(self, {2, 2}, {2, 2}, {1, 1}, false, false, EValue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, 3, 4));
  ASSERT_TRUE(avg_pool(self, {2, 2}, {2, 2}, {1, 1}, false, true, EValue(int64_t{2}), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0.5, 1, 1.5, 2));
}

TEST(OpAvgPool2dTest, Int64TruncatesTowardZero) {
  TestTensor self(kI64, {1, 1, 1, 4}, {-3, 0, 5, 2});
  TestTensor out(kI64, {1, 1, 1, 2});
  ASSERT_TRUE(avg_pool(self, {1, 2}, {}, {0}, false, true, EValue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 3));
}

TEST(OpAvgPool2dTest, Errors) {
  TestTensor self(kF32, {1, 1, 4, 4});
  TestTensor out(kF32, {1, 1, 2, 2});
  Status s = avg_pool(self, {2, 2}, {}, {0}, false, true, EValue(int64_t{0}), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::avg_pool2d.out: argument 'divisor_override' is 0"));

  TestTensor ints(ScalarType::kInt, {1, 1, 4, 4});
  TestTensor int_out(ScalarType::kInt, {1, 1, 2, 2});
  s = avg_pool(ints, {2, 2}, {}, {0}, false, true, EValue(), int_out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType,
                         "argument 'self' has dtype int32, which is not supported"));
}

TEST(OpAdaptivePoolTest, OverlappingWindows) {
  // 3 -> 2: windows [0, 2) and [1, 3) in each dimension.
  TestTensor self(kF32, {1, 3, 3}, iota(9));
  TestTensor out(kF32, {1, 2, 2});
  IntListArg size({2, 2});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&adaptive_avg_pool2d_out, "aten::_adaptive_avg_pool2d.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(2, 3, 5, 6));

  TestTensor max_out(kF32, {1, 2, 2});
  TestTensor indices(kI64, {1, 2, 2});
  IntListArg size2({2, 2});
  KernelArgs max_args{self.evalue(), size2.evalue(), max_out.evalue(), indices.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&adaptive_max_pool2d_out, "aten::adaptive_max_pool2d.out", max_args).ok());
  EXPECT_THAT(max_out.values(), ElementsAre(4, 5, 7, 8));
  EXPECT_THAT(indices.values(), ElementsAre(4, 5, 7, 8));
}

TEST(OpAdaptivePoolTest, Errors) {
  TestTensor self(kF32, {1, 1, 0, 4});
  TestTensor out(kF32, {1, 1, 2, 2});
  IntListArg size({2, 2});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&adaptive_avg_pool2d_out, "aten::_adaptive_avg_pool2d.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::_adaptive_avg_pool2d.out: argument 'self' has shape "
                         "[1, 1, 0, 4]"));

  TestTensor good(kF32, {1, 1, 4, 4});
  IntListArg bad_size({2, -1});
  KernelArgs args2{good.evalue(), bad_size.evalue(), out.evalue(), EValue()};
  s = run_kernel(&adaptive_avg_pool2d_out, "aten::_adaptive_avg_pool2d.out", args2);
  EXPECT_THAT(s.message(), HasSubstr("argument 'output_size' has size -1 at dimension 1"));
}

TEST(OpMaxPool3dTest, VolumeIndices) {
  TestTensor self(kF32, {1, 1, 2, 2, 2}, {0, 1, 2, 3, 7, 5, 6, 4});
  TestTensor out(kF32, {1, 1, 1, 1, 1});
  TestTensor indices(kI64, {1, 1, 1, 1, 1});
  IntListArg k({2}), s({}), p({0}), d({1});
  KernelArgs args{self.evalue(), k.evalue(), s.evalue(), p.evalue(), d.evalue(),
                  EValue(false), out.evalue(), indices.evalue(), EValue()};
  ASSERT_TRUE(
      run_kernel(&max_pool3d_with_indices_out, "aten::max_pool3d_with_indices.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(7));
  EXPECT_THAT(indices.values(), ElementsAre(4));  // (1 * 2 + 0) * 2 + 0.
}

TEST(OpAvgPool1dTest, OneValuePerList) {
  TestTensor self(kF32, {1, 4}, {1, 2, 3, 5});
  TestTensor out(kF32, {1, 2});
  IntListArg k({2}), s({}), p({0});
  KernelArgs args{self.evalue(), k.evalue(), s.evalue(), p.evalue(), EValue(false), EValue(true),
                  out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&avg_pool1d_out, "aten::avg_pool1d.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1.5, 4));

  IntListArg k2({2, 2});
  KernelArgs args2{self.evalue(), k2.evalue(), s.evalue(), p.evalue(), EValue(false),
                   EValue(true), out.evalue(), EValue()};
  Status st = run_kernel(&avg_pool1d_out, "aten::avg_pool1d.out", args2);
  EXPECT_THAT(st, ErrorIs(Error::kInvalidArgument,
                          "aten::avg_pool1d.out: argument 'kernel_size' has 2 values, "
                          "expected 1"));
}

TEST(OpAvgPool3dTest, NoReducedFloats) {
  TestTensor self(ScalarType::kHalf, {1, 2, 2, 2});
  TestTensor out(ScalarType::kHalf, {1, 1, 1, 1});
  IntListArg k({2}), s({}), p({0});
  KernelArgs args{self.evalue(), k.evalue(), s.evalue(), p.evalue(), EValue(false), EValue(true),
                  EValue(), out.evalue(), EValue()};
  Status st = run_kernel(&avg_pool3d_out, "aten::avg_pool3d.out", args);
  EXPECT_THAT(st, ErrorIs(Error::kInvalidType,
                          "argument 'self' has dtype float16, which is not supported "
                          "(supported: float32, float64, int64)"));
}

}  // namespace
}  // namespace torchlight::portable
