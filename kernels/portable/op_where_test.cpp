// where and masked_fill: condition/mask dtypes, promotion, broadcasting,
// value checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(OpWhereTest, PromotesAndBroadcastsMatchesTorch) {
  TestTensor cond(ScalarType::kBool, {2, 1}, {1, 0});
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor b(ScalarType::kDouble, {}, {2.5});
  TestTensor out(ScalarType::kDouble, {2, 2});
  KernelArgs args{cond.evalue(), a.evalue(), b.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&where_self_out, "aten::where.self_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, 2.5, 2.5));
}

TEST(OpWhereTest, ConditionMustBeBoolOrUint8) {
  TestTensor cond(ScalarType::kChar, {2}, {1, 0});
  TestTensor a(ScalarType::kFloat, {2}, {1, 2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs args{cond.evalue(), a.evalue(), a.evalue(), out.evalue(), EValue()};
  const Status status = run_kernel(&where_self_out, "aten::where.self_out", args);
  EXPECT_EQ(status.code(), Error::kInvalidType);
  EXPECT_THAT(status.message(), HasSubstr("aten::where.self_out"));
  EXPECT_THAT(status.message(), HasSubstr("'condition'"));

  TestTensor cond_u8(ScalarType::kByte, {2}, {200, 0});
  TestTensor b(ScalarType::kFloat, {2}, {3, 4});
  KernelArgs u8_args{cond_u8.evalue(), a.evalue(), b.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&where_self_out, "aten::where.self_out", u8_args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 4));
}

TEST(OpWhereTest, OutMustHaveTheCommonDtype) {
  TestTensor cond(ScalarType::kBool, {2}, {1, 0});
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kShort, {2});
  KernelArgs args{cond.evalue(), a.evalue(), a.evalue(), out.evalue(), EValue()};
  const Status status = run_kernel(&where_self_out, "aten::where.self_out", args);
  EXPECT_EQ(status.code(), Error::kInvalidType);
  EXPECT_THAT(status.message(), HasSubstr("'out'"));
}

TEST(OpMaskedFillTest, BroadcastsTheMaskAndChecksTheValue) {
  TestTensor self(ScalarType::kFloat, {3}, {1, 2, 3});
  TestTensor mask(ScalarType::kBool, {2, 3}, {1, 0, 1, 0, 1, 0});
  TestTensor out(ScalarType::kFloat, {2, 3});
  KernelArgs args{self.evalue(), mask.evalue(), EValue(int64_t{0}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&masked_fill_scalar_out, "aten::masked_fill.Scalar_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 2, 0, 1, 0, 3));

  TestTensor ints(ScalarType::kInt, {3}, {1, 2, 3});
  TestTensor small_mask(ScalarType::kBool, {3}, {1, 0, 0});
  TestTensor out_int(ScalarType::kInt, {3});
  KernelArgs nan_args{ints.evalue(), small_mask.evalue(), EValue(static_cast<double>(NAN)),
                      out_int.evalue(), EValue()};
  const Status status =
      run_kernel(&masked_fill_scalar_out, "aten::masked_fill.Scalar_out", nan_args);
  EXPECT_EQ(status.code(), Error::kInvalidArgument);
  EXPECT_THAT(status.message(), HasSubstr("'value'"));

  TestTensor u8_mask(ScalarType::kByte, {3}, {1, 0, 0});
  KernelArgs u8_args{ints.evalue(), u8_mask.evalue(), EValue(int64_t{1}), out_int.evalue(),
                     EValue()};
  const Status mask_status =
      run_kernel(&masked_fill_scalar_out, "aten::masked_fill.Scalar_out", u8_args);
  EXPECT_EQ(mask_status.code(), Error::kInvalidType);
  EXPECT_THAT(mask_status.message(), HasSubstr("'mask'"));
}

}  // namespace
}  // namespace torchlight::portable
