// where and masked_fill: condition/mask dtypes, promotion, broadcasting,
// value checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

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
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::where.self_out"));
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
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "'out'"));
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
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'value'"));

  TestTensor u8_mask(ScalarType::kByte, {3}, {1, 0, 0});
  KernelArgs u8_args{ints.evalue(), u8_mask.evalue(), EValue(int64_t{1}), out_int.evalue(),
                     EValue()};
  const Status mask_status =
      run_kernel(&masked_fill_scalar_out, "aten::masked_fill.Scalar_out", u8_args);
  EXPECT_THAT(mask_status, ErrorIs(Error::kInvalidType, "'mask'"));
}

// The prepared path (where_self_out_prepare): same-shape dense operands
// take a plain loop whose bits equal the reference's, broadcasting goes back
// to the reference, and the dtype rules reject at load.
TEST(OpWherePreparedTest, DensePathIsBitIdenticalToTheReference) {
  const Kernel* kernel = nullptr;
  for (const Kernel& k : portable_kernels()) {
    if (std::string(k.name) == "aten::where.self_out") kernel = &k;
  }
  ASSERT_NE(kernel, nullptr);
  ASSERT_NE(kernel->prepare, nullptr);
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kInt,
                           ScalarType::kLong}) {
    for (const std::vector<SizesType>& other_sizes :
         {std::vector<SizesType>{2, 3}, std::vector<SizesType>{3}}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " other dims " +
                   std::to_string(other_sizes.size()));
      TestTensor c(ScalarType::kBool, {2, 3}, {1, 0, 0, 1, 1, 0});
      // NaN (and its bits) only where the dtype holds it.
      const double nan = is_floating_point(dtype) ? NAN : -5;
      TestTensor a(dtype, {2, 3}, {nan, -1, 2, 3.5, -0.0, 7});
      TestTensor b(dtype, other_sizes,
                   other_sizes.size() == 2 ? std::vector<double>{9, 8, nan, 6, 5, 4}
                                           : std::vector<double>{9, 8, 7});
      TestTensor fast_out(dtype, {2, 3});
      TestTensor reference_out(dtype, {2, 3});
      KernelArgs fast_args{c.evalue(), a.evalue(), b.evalue(), fast_out.evalue(), EValue()};
      KernelArgs reference_args{c.evalue(), a.evalue(), b.evalue(), reference_out.evalue(),
                                EValue()};
      PrepareContext context(nullptr, kernel->name);
      PreparedCall call;
      call.eval = kernel->eval;
      ASSERT_TRUE(check_call(fast_args.span(), *kernel->schema).ok());
      ASSERT_TRUE(kernel->prepare(context, fast_args.span(), &call).ok());
      EXPECT_NE(call.eval, kernel->eval);
      KernelContext fast_ctx(nullptr, nullptr, kernel->name);
      call.eval(fast_ctx, fast_args.span());
      KernelContext reference_ctx(nullptr, nullptr, kernel->name);
      kernel->eval(reference_ctx, reference_args.span());
      ASSERT_FALSE(fast_ctx.failed()) << fast_ctx.status().message();
      ASSERT_FALSE(reference_ctx.failed()) << reference_ctx.status().message();
      const Tensor x = fast_out.tensor();
      const Tensor y = reference_out.tensor();
      EXPECT_EQ(std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()), 0);
    }
  }
}

TEST(OpWherePreparedTest, DtypeRulesRejectAtLoadNamingTheArgument) {
  TestTensor c(ScalarType::kFloat, {2});
  TestTensor a(ScalarType::kFloat, {2});
  TestTensor out(ScalarType::kFloat, {2});
  KernelArgs bad_condition{c.evalue(), a.evalue(), a.evalue(), out.evalue(), EValue()};
  PrepareContext context(nullptr, "aten::where.self_out");
  PreparedCall call;
  Status s = where_self_out_prepare(context, bad_condition.span(), &call);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'condition' has dtype float32"));
  TestTensor mask(ScalarType::kBool, {2});
  TestTensor out_int(ScalarType::kInt, {2});
  KernelArgs bad_out{mask.evalue(), a.evalue(), a.evalue(), out_int.evalue(), EValue()};
  s = where_self_out_prepare(context, bad_out.span(), &call);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'out'"));
}

}  // namespace
}  // namespace torchlight::portable
