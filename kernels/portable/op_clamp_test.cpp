// clamp, clamp.Tensor and hardtanh: promotion, NaN rules, bound checks.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>

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

constexpr ScalarType kF32 = ScalarType::kFloat;

Status clamp(TestTensor& self, const EValue& min, const EValue& max, TestTensor& out) {
  KernelArgs args{self.evalue(), min, max, out.evalue(), EValue()};
  return run_kernel(&clamp_out, "aten::clamp.out", args);
}

TEST(OpClampTest, ScalarBoundsPromoteIntegersMatchesTorch) {
  TestTensor a(ScalarType::kInt, {4}, {1, 2, 3, 4});
  TestTensor out(kF32, {4});
  ASSERT_TRUE(clamp(a, EValue(0.5), EValue(2.5), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, 2.5, 2.5));

  // The result dtype is float32: an int32 out is an error.
  TestTensor out_int(ScalarType::kInt, {4});
  const Status status = clamp(a, EValue(0.5), EValue(), out_int);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidType, "aten::clamp.out"));
  EXPECT_THAT(status.message(), HasSubstr("'out'"));
}

TEST(OpClampTest, NanRulesMatchTorch) {
  TestTensor a(kF32, {3}, {NAN, -1, 3});
  TestTensor out(kF32, {3});
  // One NaN bound alone is ignored.
  ASSERT_TRUE(clamp(a, EValue(static_cast<double>(NAN)), EValue(), out).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), -1);
  EXPECT_EQ(out.get(2), 3);
  // With both bounds, a NaN bound makes everything NaN.
  ASSERT_TRUE(clamp(a, EValue(static_cast<double>(NAN)), EValue(2.0), out).ok());
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_TRUE(std::isnan(out.get(2)));
  // min > max gives max.
  ASSERT_TRUE(clamp(a, EValue(int64_t{3}), EValue(int64_t{1}), out).ok());
  EXPECT_TRUE(std::isnan(out.get(0)));
  EXPECT_EQ(out.get(1), 1);
}

TEST(OpClampTest, BoundsThatOverflowTheDtypeFail) {
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor out(ScalarType::kChar, {2});
  const Status status = clamp(a, EValue(int64_t{-1000}), EValue(int64_t{5}), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'min'"));

  // uint8 takes -1 as 255 (c10's all-ones idiom): everything clamps to max.
  TestTensor u(ScalarType::kByte, {2}, {1, 2});
  TestTensor out_u(ScalarType::kByte, {2});
  ASSERT_TRUE(clamp(u, EValue(int64_t{-1}), EValue(int64_t{5}), out_u).ok());
  EXPECT_THAT(out_u.values(), ElementsAre(5, 5));
}

TEST(OpClampTest, NeedsABoundAndRejectsBool) {
  TestTensor a(kF32, {1}, {1});
  TestTensor out(kF32, {1});
  const Status status = clamp(a, EValue(), EValue(), out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "'min' and 'max'"));

  TestTensor b(ScalarType::kBool, {1}, {1});
  TestTensor out_b(ScalarType::kBool, {1});
  const Status bool_status = clamp(b, EValue(false), EValue(true), out_b);
  EXPECT_THAT(bool_status, ErrorIs(Error::kInvalidType, "bool"));
}

TEST(OpClampTensorTest, BroadcastsAllThreeAndPropagatesNan) {
  TestTensor a(kF32, {3}, {0.5, NAN, 5});
  TestTensor lo(kF32, {2, 1}, {1, NAN});
  TestTensor out(kF32, {2, 3});
  KernelArgs args{a.evalue(), lo.evalue(), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&clamp_tensor_out, "aten::clamp.Tensor_out", args).ok());
  EXPECT_EQ(out.get(0), 1);
  EXPECT_TRUE(std::isnan(out.get(1)));
  EXPECT_EQ(out.get(2), 5);
  for (int i = 3; i < 6; ++i) EXPECT_TRUE(std::isnan(out.get(i))) << i;

  TestTensor hi(kF32, {}, {2});
  KernelArgs both{a.evalue(), lo.evalue(), hi.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&clamp_tensor_out, "aten::clamp.Tensor_out", both).ok());
  EXPECT_EQ(out.get(2), 2);
}

TEST(OpClampTensorTest, PromotesWithTheBoundsMatchesTorch) {
  TestTensor a(ScalarType::kChar, {2}, {1, 2});
  TestTensor lo(ScalarType::kDouble, {}, {1.5});
  TestTensor out(ScalarType::kDouble, {2});
  KernelArgs args{a.evalue(), lo.evalue(), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&clamp_tensor_out, "aten::clamp.Tensor_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(1.5, 2));
}

TEST(OpHardtanhTest, IntegerBoundsTruncateAndUint8RejectsNegative) {
  TestTensor a(ScalarType::kInt, {3}, {-3, 0, 3});
  TestTensor out(ScalarType::kInt, {3});
  KernelArgs args{a.evalue(), EValue(-1.7), EValue(1.7), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&hardtanh_out, "aten::hardtanh.out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(-1, 0, 1));

  TestTensor u(ScalarType::kByte, {1}, {3});
  TestTensor out_u(ScalarType::kByte, {1});
  KernelArgs u_args{u.evalue(), EValue(int64_t{-1}), EValue(int64_t{1}), out_u.evalue(),
                    EValue()};
  const Status status = run_kernel(&hardtanh_out, "aten::hardtanh.out", u_args);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::hardtanh.out"));
  EXPECT_THAT(status.message(), HasSubstr("'min_val'"));
}

// The prepared path (clamp_out_prepare, hardtanh_out_prepare): for a dense
// float32/float64 self the eval prepare installs gives the reference's bits
// for every kind of bound, handing back the ones it does not take.
TEST(OpClampPreparedTest, DensePathIsBitIdenticalToTheReference) {
  const std::pair<const char*, KernelFunction> ops[] = {{"aten::clamp.out", &clamp_out},
                                                        {"aten::hardtanh.out", &hardtanh_out}};
  const EValue bounds[] = {EValue(),          EValue(int64_t{-1}), EValue(0.25),
                           EValue(2.5),       EValue(1e300),       EValue(true),
                           EValue(static_cast<double>(NAN))};
  for (const auto& [name, reference] : ops) {
    const Kernel* kernel = nullptr;
    for (const Kernel& k : portable_kernels()) {
      if (std::string(k.name) == name) kernel = &k;
    }
    ASSERT_NE(kernel, nullptr);
    ASSERT_NE(kernel->prepare, nullptr);
    for (ScalarType dtype : {kF32, ScalarType::kDouble}) {
      for (const EValue& lo : bounds) {
        for (const EValue& hi : bounds) {
          if (lo.is_none() && hi.is_none()) continue;
          if (std::string(name) == "aten::hardtanh.out" && (lo.is_none() || hi.is_none())) continue;
          SCOPED_TRACE(std::string(name) + " " + to_string(dtype) + " " + to_string(lo.tag()) +
                       " " + to_string(hi.tag()));
          TestTensor a(dtype, {2, 4}, {NAN, -3, -1, -0.5, 0, 0.5, 1.5, 3});
          TestTensor fast_out(dtype, {2, 4});
          TestTensor reference_out(dtype, {2, 4});
          KernelArgs fast_args{a.evalue(), lo, hi, fast_out.evalue(), EValue()};
          KernelArgs reference_args{a.evalue(), lo, hi, reference_out.evalue(), EValue()};
          PrepareContext context(nullptr, name);
          PreparedCall call;
          call.eval = reference;
          ASSERT_TRUE(check_call(fast_args.span(), *kernel->schema).ok());
          ASSERT_TRUE(kernel->prepare(context, fast_args.span(), &call).ok());
          EXPECT_NE(call.eval, reference);  // The dense path.
          KernelContext fast_ctx(nullptr, nullptr, name);
          call.eval(fast_ctx, fast_args.span());
          KernelContext reference_ctx(nullptr, nullptr, name);
          reference(reference_ctx, reference_args.span());
          ASSERT_EQ(fast_ctx.failed(), reference_ctx.failed());
          if (reference_ctx.failed()) {
            EXPECT_STREQ(fast_ctx.status().message(), reference_ctx.status().message());
            continue;
          }
          const Tensor x = fast_out.tensor();
          const Tensor y = reference_out.tensor();
          EXPECT_EQ(std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()), 0);
        }
      }
    }
  }
}

TEST(OpClampPreparedTest, LoadRejectsWhatTheDtypesAndNoneBoundsDecide) {
  TestTensor a(kF32, {2}, {1, 2});
  TestTensor out_int(ScalarType::kInt, {2});
  // A float self keeps its dtype whatever the bounds: an int32 out is wrong at load.
  KernelArgs wrong_out{a.evalue(), EValue(int64_t{0}), EValue(), out_int.evalue(), EValue()};
  PrepareContext context(nullptr, "aten::clamp.out");
  PreparedCall call;
  Status s = clamp_out_prepare(context, wrong_out.span(), &call);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'out'"));
  TestTensor out(kF32, {2});
  KernelArgs no_bounds{a.evalue(), EValue(), EValue(), out.evalue(), EValue()};
  s = clamp_out_prepare(context, no_bounds.span(), &call);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'min' and 'max'"));
  TestTensor b(ScalarType::kBool, {2}, {1, 0});
  TestTensor b_out(ScalarType::kBool, {2});
  KernelArgs bool_self{b.evalue(), EValue(0.0), EValue(1.0), b_out.evalue(), EValue()};
  s = hardtanh_out_prepare(context, bool_self.span(), &call);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'self' has dtype bool"));
}

}  // namespace
}  // namespace torchlight::portable
