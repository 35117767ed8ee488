// tril and triu: batches, diagonals, layouts, rank errors.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Status triangle(KernelFunction fn, TestTensor& self, int64_t diagonal, TestTensor& out) {
  KernelArgs args{self.evalue(), EValue(diagonal), out.evalue(), EValue()};
  return run_kernel(fn, "aten::tril.out", args);
}

TEST(OpTrilTest, BatchedWithDiagonals) {
  TestTensor a(ScalarType::kInt, {2, 2, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  TestTensor out(ScalarType::kInt, {2, 2, 3});
  ASSERT_TRUE(triangle(&tril_out, a, 0, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0, 0, 4, 5, 0, 7, 0, 0, 10, 11, 0));
  ASSERT_TRUE(triangle(&triu_out, a, 1, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 2, 3, 0, 0, 6, 0, 8, 9, 0, 0, 12));
  ASSERT_TRUE(triangle(&tril_out, a, -5, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0));
  ASSERT_TRUE(triangle(&triu_out, a, INT64_MIN, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12));
}

TEST(OpTrilTest, PermutedInputAndOut) {
  TestTensor a(ScalarType::kFloat, {3, 2}, {1, 2, 3, 4, 5, 6}, dim_order({1, 0}));
  TestTensor out(ScalarType::kFloat, {3, 2}, {}, dim_order({1, 0}));
  ASSERT_TRUE(triangle(&tril_out, a, 0, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(1, 0, 3, 4, 5, 6));
}

TEST(OpTrilTest, NeedsTwoDimensionsAndTheSameDtype) {
  TestTensor a(ScalarType::kFloat, {3}, {1, 2, 3});
  TestTensor out(ScalarType::kFloat, {3});
  const Status status = triangle(&tril_out, a, 0, out);
  EXPECT_THAT(status, ErrorIs(Error::kInvalidArgument, "aten::tril.out"));
  EXPECT_THAT(status.message(), HasSubstr("'self' has 1 dimensions"));

  TestTensor m(ScalarType::kFloat, {2, 2});
  TestTensor out_d(ScalarType::kDouble, {2, 2});
  EXPECT_THAT(triangle(&triu_out, m, 0, out_d),
              ErrorIs(Error::kInvalidType,
                      "argument 'out' has dtype float64, expected the result dtype"));
}

}  // namespace
}  // namespace torchlight::portable
