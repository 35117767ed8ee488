// Creation ops the conformance harness cannot check: empty.out and
// empty_like.out (whose values are unspecified) only resize; the
// memory_format argument is validated; and fills of every dtype, bitwise.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::dynamic_bound;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

TEST(OpEmptyTest, ResizesOnly) {
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  out.set(0, 7);
  IntListArg size({2, 3});
  KernelArgs args{size.evalue(), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&empty_out, "aten::empty.out", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
  EXPECT_EQ(out.get(0), 7);  // Untouched.
  ASSERT_TRUE(args[3].is_tensor());

  TestTensor like(ScalarType::kInt, {1, 5});
  KernelArgs like_args{like.evalue(), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&empty_like_out, "aten::empty_like.out", like_args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(1, 5));
}

TEST(OpEmptyTest, EmptyStridedResizesOnly) {
  TestTensor out(kF32, {4, 4}, {}, dynamic_bound());
  IntListArg size({3, 2});
  IntListArg stride({1, 3});  // Column-major: out's dim order decides, not this.
  KernelArgs args{size.evalue(), stride.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&empty_strided_out, "aten::empty_strided.out", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 2));
  IntListArg short_stride({1});
  KernelArgs bad{size.evalue(), short_stride.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&empty_strided_out, "aten::empty_strided.out", bad).message(),
              HasSubstr("'stride'"));
}

TEST(OpEmptyTest, Errors) {
  TestTensor out(kF32, {2, 3});
  IntListArg negative({2, -3});
  KernelArgs args{negative.evalue(), EValue(), out.evalue(), EValue()};
  Status s = run_kernel(&empty_out, "aten::empty.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::empty.out"));
  EXPECT_THAT(s.message(), HasSubstr("'size'"));
  IntListArg bigger({3, 3});
  KernelArgs static_out{bigger.evalue(), EValue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&empty_out, "aten::empty.out", static_out).message(), HasSubstr("'out'"));
}

TEST(OpMemoryFormatTest, ChannelsLastFormatsNeedTheRightRank) {
  TestTensor self(kF32, {2, 3, 4}, {});
  TestTensor out(kF32, {2, 3, 4});
  for (int64_t format : {2, 3, 7, -1}) {
    KernelArgs args{self.evalue(), EValue(format), out.evalue(), EValue()};
    Status s = run_kernel(&clone_out, "aten::clone.out", args);
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'memory_format'")) << format;
  }
  for (int64_t format : {0, 1}) {
    KernelArgs args{self.evalue(), EValue(format), out.evalue(), EValue()};
    EXPECT_TRUE(run_kernel(&clone_out, "aten::clone.out", args).ok()) << format;
  }
}

TEST(OpMemoryFormatTest, ToCopyIntoChannelsLastOut) {
  // The exporter gives out the channels-last dim order; the kernel writes
  // through out's strides, so the logical values are self's.
  std::vector<double> values;
  for (int i = 0; i < 24; ++i) values.push_back(i);
  TestTensor self(kF32, {1, 2, 3, 4}, values);
  TestTensor out(ScalarType::kDouble, {1, 2, 3, 4}, {}, dim_order({0, 2, 3, 1}));
  KernelArgs args{self.evalue(), EValue(false), EValue(int64_t{2}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&to_copy_out, "aten::_to_copy.out", args).ok());
  EXPECT_EQ(out.values(), values);
  // In memory, channels vary fastest: element (0, 1, 0, 0) = 12 is second.
  EXPECT_EQ(static_cast<const double*>(out.impl().data())[1], 12);
}

// Every dtype: full writes the converted value into every element,
// including a channels-last out.
class OpFullDtypeTest : public ::testing::TestWithParam<ScalarType> {};

TEST_P(OpFullDtypeTest, FillsEveryElement) {
  const ScalarType dtype = GetParam();
  TestTensor out(dtype, {2, 1, 2, 2}, {}, dim_order({0, 2, 3, 1}));
  IntListArg size({2, 1, 2, 2});
  KernelArgs args{size.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&full_out, "aten::full.out", args).ok()) << to_string(dtype);
  for (double v : out.values()) EXPECT_EQ(v, 1) << to_string(dtype);
}

INSTANTIATE_TEST_SUITE_P(AllDtypes, OpFullDtypeTest,
                         ::testing::Values(ScalarType::kByte, ScalarType::kChar,
                                           ScalarType::kShort, ScalarType::kInt, ScalarType::kLong,
                                           ScalarType::kHalf, ScalarType::kBFloat16,
                                           ScalarType::kFloat, ScalarType::kDouble,
                                           ScalarType::kBool));

TEST(OpFullTest, RejectsNonRealDtypes) {
  TestTensor out(ScalarType::kQInt8, {2});
  IntListArg size({2});
  KernelArgs args{size.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
  Status s = run_kernel(&full_out, "aten::full.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'out'"));
}

}  // namespace
}  // namespace torchlight::portable
