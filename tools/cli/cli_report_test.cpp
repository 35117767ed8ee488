#include "tools/cli/cli_report.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <string>

namespace torchlight {
namespace cli {
namespace {

using ::torchlight::testing::ErrorIs;

TEST(DescribeTensorInfoTest, StaticDynamicAndUnbound) {
  const int32_t sizes[] = {8, 3};
  TensorInfo info;
  info.dtype = ScalarType::kFloat;
  info.sizes = Span<const int32_t>(sizes, 2);
  EXPECT_EQ(describe_tensor_info(info), "float32 [8, 3]");
  info.dynamism = TensorShapeDynamism::kDynamicBound;
  EXPECT_EQ(describe_tensor_info(info), "float32 [<=8, <=3]");
  info.dtype = ScalarType::kLong;
  info.dynamism = TensorShapeDynamism::kDynamicUnbound;
  EXPECT_EQ(describe_tensor_info(info), "int64 [8, 3] (unbounded)");
  info.sizes = {};
  info.dynamism = TensorShapeDynamism::kStatic;
  EXPECT_EQ(describe_tensor_info(info), "int64 []");
}

TEST(DescribeScalarTest, EachScalarTag) {
  EXPECT_EQ(describe_scalar(EValue(int64_t{-3})), "Int -3");
  EXPECT_EQ(describe_scalar(EValue(0.5)), "Double 0.5");
  EXPECT_EQ(describe_scalar(EValue(true)), "Bool true");
  EXPECT_EQ(describe_scalar(EValue()), "None");
}

TEST(WithCommasTest, GroupsThousands) {
  EXPECT_EQ(with_commas(0), "0");
  EXPECT_EQ(with_commas(999), "999");
  EXPECT_EQ(with_commas(1000), "1,000");
  EXPECT_EQ(with_commas(1234567), "1,234,567");
}

TEST(BlameTest, PrefixesTheFileOnce) {
  Status s = blame("a.npy", Status::error(Error::kInvalidType, "wrong dtype"));
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType));
  EXPECT_STREQ(s.message(), "a.npy: wrong dtype");
  Status named = blame("a.npy", Status::error(Error::kNotFound, "cannot open 'a.npy'"));
  EXPECT_STREQ(named.message(), "cannot open 'a.npy'");
  EXPECT_TRUE(blame("a.npy", Status()).ok());
}

TEST(ReportErrorTest, OneLineNamingTheFile) {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(report_error("m.pte", "bad\nthing"), kExitFailure);
  EXPECT_EQ(report_error("m.pte", "cannot open 'm.pte'"), kExitFailure);
  EXPECT_EQ(report_error("", Status::error(Error::kInvalidArgument, "no file here")),
            kExitFailure);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "error: m.pte: bad thing\n"
            "error: cannot open 'm.pte'\n"
            "error: no file here\n");
}

}  // namespace
}  // namespace cli
}  // namespace torchlight
