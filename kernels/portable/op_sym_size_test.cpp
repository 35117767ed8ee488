// aten::sym_size.int and aten::sym_numel: sizes of (dynamically shaped)
// tensors as Int values.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dynamic_bound;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

TEST(OpSymSizeTest, SizeOfEachDim) {
  TestTensor t(ScalarType::kFloat, {2, 5, 3});
  for (int64_t dim : {0, 1, 2, -1, -3}) {
    KernelArgs args{t.evalue(), EValue(dim), EValue(int64_t{-99})};
    ASSERT_TRUE(run_kernel(&sym_size_int, "aten::sym_size.int", args).ok());
    ASSERT_TRUE(args[2].is_int());
    const int64_t expected[] = {2, 5, 3};
    EXPECT_EQ(args[2].to_int(), expected[(dim + 3) % 3]);
  }
}

TEST(OpSymSizeTest, FollowsResize) {
  TestTensor t(ScalarType::kFloat, {4, 6}, {}, dynamic_bound());
  const SizesType smaller[] = {2, 3};
  ASSERT_TRUE(t.impl().resize(smaller).ok());
  KernelArgs args{t.evalue(), EValue(int64_t{1}), EValue()};
  ASSERT_TRUE(run_kernel(&sym_size_int, "aten::sym_size.int", args).ok());
  EXPECT_EQ(args[2].to_int(), 3);
  KernelArgs numel{t.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&sym_numel, "aten::sym_numel", numel).ok());
  EXPECT_EQ(numel[1].to_int(), 6);
}

TEST(OpSymSizeTest, Errors) {
  TestTensor t(ScalarType::kFloat, {2, 5});
  KernelArgs bad_dim{t.evalue(), EValue(int64_t{2}), EValue()};
  Status s = run_kernel(&sym_size_int, "aten::sym_size.int", bad_dim);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::sym_size.int"));
  EXPECT_THAT(s.message(), HasSubstr("'dim'"));
  TestTensor scalar(ScalarType::kFloat, {});
  KernelArgs zero_d{scalar.evalue(), EValue(int64_t{0}), EValue()};
  EXPECT_THAT(run_kernel(&sym_size_int, "aten::sym_size.int", zero_d).message(),
              HasSubstr("'self'"));
  KernelArgs not_tensor{EValue(int64_t{1}), EValue(int64_t{0}), EValue()};
  EXPECT_EQ(run_kernel(&sym_size_int, "aten::sym_size.int", not_tensor).code(),
            Error::kInvalidType);
}

TEST(OpSymSizeTest, StrideAndStorageOffset) {
  TestTensor t(ScalarType::kFloat, {2, 3, 4}, {}, kernel_test::dim_order({0, 2, 1}));
  const int64_t expected[] = {12, 1, 3};
  for (int64_t dim = 0; dim < 3; ++dim) {
    KernelArgs args{t.evalue(), EValue(dim), EValue()};
    ASSERT_TRUE(run_kernel(&sym_stride_int, "aten::sym_stride.int", args).ok());
    EXPECT_EQ(args[2].to_int(), expected[dim]);
  }
  KernelArgs offset{t.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&sym_storage_offset, "aten::sym_storage_offset", offset).ok());
  ASSERT_TRUE(offset[1].is_int());
  EXPECT_EQ(offset[1].to_int(), 0);
}

TEST(OpLocalScalarDenseTest, ValueKindFollowsDtype) {
  TestTensor f(ScalarType::kHalf, {1, 1}, {2.5});
  KernelArgs fa{f.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&local_scalar_dense, "aten::_local_scalar_dense", fa).ok());
  ASSERT_TRUE(fa[1].is_double());
  EXPECT_EQ(fa[1].to_double(), 2.5);
  TestTensor i(ScalarType::kChar, {}, {-7});
  KernelArgs ia{i.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&local_scalar_dense, "aten::_local_scalar_dense", ia).ok());
  ASSERT_TRUE(ia[1].is_int());
  EXPECT_EQ(ia[1].to_int(), -7);
  TestTensor b(ScalarType::kBool, {1}, {1});
  KernelArgs ba{b.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&local_scalar_dense, "aten::_local_scalar_dense", ba).ok());
  ASSERT_TRUE(ba[1].is_bool());
  EXPECT_TRUE(ba[1].to_bool());
  TestTensor two(ScalarType::kFloat, {2});
  KernelArgs bad{two.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&local_scalar_dense, "aten::_local_scalar_dense", bad).message(),
              HasSubstr("'self'"));
}

}  // namespace
}  // namespace torchlight::portable
