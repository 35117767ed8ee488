// dim_order_ops::_empty_dim_order.out (resize only, dim order checked) and
// the argument checks of _to_dim_order_copy.out. Values of the copy against
// torch, for every dtype pair and both layouts: conformance/cases/dim_order.py.
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
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::Layout;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

constexpr const char* kEmpty = "dim_order_ops::_empty_dim_order.out";
constexpr const char* kCopy = "dim_order_ops::_to_dim_order_copy.out";

Layout dynamic_channels_last() {
  Layout l = dim_order({0, 2, 3, 1});
  l.dynamism = TensorShapeDynamism::kDynamicBound;
  return l;
}

TEST(EmptyDimOrderTest, ResizesAndSetsTheReturn) {
  TestTensor out(ScalarType::kHalf, {2, 4, 3, 3}, {}, dynamic_channels_last());
  IntListArg size({2, 4, 2, 3});
  IntListArg order({0, 2, 3, 1});
  KernelArgs args{size.evalue(), order.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(empty_dim_order_out, kEmpty, args);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.sizes(), (std::vector<SizesType>{2, 4, 2, 3}));
  ASSERT_TRUE(args[3].is_tensor());
  EXPECT_EQ(args[3].to_tensor().impl(), &out.impl());

  KernelArgs no_order{size.evalue(), EValue(), out.evalue(), EValue()};
  EXPECT_TRUE(run_kernel(empty_dim_order_out, kEmpty, no_order).ok());
}

TEST(EmptyDimOrderTest, DimOrderMustMatchOut) {
  TestTensor out(ScalarType::kFloat, {2, 4, 3, 3});
  IntListArg size({2, 4, 3, 3});
  IntListArg channels_last({0, 2, 3, 1});
  KernelArgs args{size.evalue(), channels_last.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(empty_dim_order_out, kEmpty, args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "dim_order"));
  EXPECT_THAT(s.message(), HasSubstr("disagree"));

  IntListArg repeated({0, 0, 1, 2});
  KernelArgs bad{size.evalue(), repeated.evalue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(empty_dim_order_out, kEmpty, bad).message(),
              HasSubstr("not a permutation"));

  IntListArg wrong_size({2, 4, 3, 3, 1});
  KernelArgs rank{wrong_size.evalue(), EValue(), out.evalue(), EValue()};
  EXPECT_FALSE(run_kernel(empty_dim_order_out, kEmpty, rank).ok());
}

TEST(ToDimOrderCopyTest, WritesLogicalValuesIntoChannelsLastOut) {
  std::vector<double> values;
  for (int i = 0; i < 2 * 3 * 2 * 2; ++i) values.push_back(i - 7);
  TestTensor self(ScalarType::kInt, {2, 3, 2, 2}, values);
  TestTensor out(ScalarType::kDouble, {2, 3, 2, 2}, {}, dim_order({0, 2, 3, 1}));
  IntListArg order({0, 2, 3, 1});
  KernelArgs args{self.evalue(), EValue(false), order.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(to_dim_order_copy_out, kCopy, args);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(out.values(), values);  // values() reads in logical order.
  EXPECT_EQ(args[4].to_tensor().impl(), &out.impl());
}

TEST(ToDimOrderCopyTest, ArgumentErrorsNameTheArgument) {
  TestTensor self(ScalarType::kFloat, {2, 3});
  TestTensor out(ScalarType::kFloat, {2, 3});
  IntListArg three({0, 1, 2});
  KernelArgs args{self.evalue(), EValue(false), three.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(to_dim_order_copy_out, kCopy, args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'dim_order' has 3 entries"));

  KernelArgs wrong_type{self.evalue(), EValue(int64_t{0}), EValue(), out.evalue(), EValue()};
  EXPECT_THAT(run_kernel(to_dim_order_copy_out, kCopy, wrong_type),
              ErrorIs(Error::kInvalidType,
                      "dim_order_ops::_to_dim_order_copy.out (schema"));
}

}  // namespace
}  // namespace torchlight::portable
