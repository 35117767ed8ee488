// executorch_prim::et_view.default (a real view: out shares self's data)
// and executorch_prim::et_copy_index.tensor.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

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

TEST(OpEtViewTest, SharesDataAndInfersSize) {
  TestTensor self(kF32, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  TestTensor out(kF32, {3, 4});
  IntListArg size({-1, 4});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue()};
  ASSERT_TRUE(run_kernel(&et_view_default, "executorch_prim::et_view.default", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 4));
  // out's data pointer is self's (TestTensor::get reads the tensor's own
  // storage, so read through the pointer).
  ASSERT_EQ(out.impl().data(), self.impl().data());
  const float* viewed = static_cast<const float*>(out.impl().data());
  EXPECT_EQ(viewed[11], 11);
  self.set(5, 42);  // A write through self shows in out: it is a view.
  EXPECT_EQ(viewed[5], 42);
}

TEST(OpEtViewTest, ResizesADynamicOut) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {8, 8}, {}, dynamic_bound());
  IntListArg size({3, 2});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue()};
  ASSERT_TRUE(run_kernel(&et_view_default, "executorch_prim::et_view.default", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 2));
}

TEST(OpEtViewTest, Errors) {
  TestTensor self(kF32, {2, 3});
  TestTensor out(kF32, {3, 2});
  {
    IntListArg size({4, 2});
    KernelArgs args{self.evalue(), size.evalue(), out.evalue()};
    Status s = run_kernel(&et_view_default, "executorch_prim::et_view.default", args);
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "executorch_prim::et_view.default"));
    EXPECT_THAT(s.message(), HasSubstr("'size'"));
  }
  {
    TestTensor permuted(kF32, {2, 3}, {}, dim_order({1, 0}));
    IntListArg size({3, 2});
    KernelArgs args{permuted.evalue(), size.evalue(), out.evalue()};
    EXPECT_THAT(run_kernel(&et_view_default, "executorch_prim::et_view.default", args).message(), HasSubstr("'self'"));
  }
  {
    TestTensor wrong_dtype(ScalarType::kInt, {3, 2});
    IntListArg size({3, 2});
    KernelArgs args{self.evalue(), size.evalue(), wrong_dtype.evalue()};
    EXPECT_THAT(run_kernel(&et_view_default, "executorch_prim::et_view.default", args).message(), HasSubstr("'out'"));
  }
  {
    IntListArg size({6});  // out is 2-D: a rank change is not a view here.
    KernelArgs args{self.evalue(), size.evalue(), out.evalue()};
    EXPECT_FALSE(run_kernel(&et_view_default, "executorch_prim::et_view.default", args).ok());
  }
  EXPECT_NE(out.impl().data(), self.impl().data());  // Failed calls did not alias.
}

TEST(OpEtCopyIndexTest, StacksRowsAndGrows) {
  TestTensor copy_to(kF32, {4, 2}, {}, dynamic_bound());
  const SizesType start[] = {0, 2};
  ASSERT_TRUE(copy_to.impl().resize(start).ok());
  for (int64_t i = 0; i < 3; ++i) {
    TestTensor row(kF32, {2}, {10.0 * i, 10.0 * i + 1});
    KernelArgs args{copy_to.evalue(), row.evalue(), EValue(i)};
    ASSERT_TRUE(run_kernel(&et_copy_index_tensor, "executorch_prim::et_copy_index.tensor", args)
                    .ok());
    EXPECT_EQ(copy_to.sizes()[0], i + 1);
  }
  EXPECT_THAT(copy_to.values(), ElementsAre(0, 1, 10, 11, 20, 21));
}

TEST(OpEtCopyIndexTest, Errors) {
  TestTensor copy_to(kF32, {2, 2});  // Static: cannot grow.
  TestTensor row(kF32, {2}, {1, 2});
  KernelArgs past_end{copy_to.evalue(), row.evalue(), EValue(int64_t{2})};
  Status s = run_kernel(&et_copy_index_tensor, "executorch_prim::et_copy_index.tensor", past_end);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'copy_to'"));
  KernelArgs negative{copy_to.evalue(), row.evalue(), EValue(int64_t{-1})};
  EXPECT_THAT(run_kernel(&et_copy_index_tensor, "executorch_prim::et_copy_index.tensor", negative).message(),
              HasSubstr("'index'"));
  TestTensor wide(kF32, {3}, {1, 2, 3});
  KernelArgs mismatch{copy_to.evalue(), wide.evalue(), EValue(int64_t{0})};
  EXPECT_FALSE(run_kernel(&et_copy_index_tensor, "executorch_prim::et_copy_index.tensor", mismatch).ok());
  TestTensor flat(kF32, {2, 2});
  KernelArgs rank{copy_to.evalue(), flat.evalue(), EValue(int64_t{0})};
  EXPECT_THAT(run_kernel(&et_copy_index_tensor, "executorch_prim::et_copy_index.tensor", rank).message(),
              HasSubstr("'copy_to'"));
}

}  // namespace
}  // namespace torchlight::portable
