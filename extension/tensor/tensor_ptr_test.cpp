// TensorPtr and its makers: ownership, layouts, conversions, refusals.
#include "extension/tensor/tensor_ptr.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "runtime/core/evalue.h"

namespace torchlight {
namespace {

TEST(TensorPtrTest, FromBlobBorrowsAndCopiesShareIt) {
  float data[6] = {0, 1, 2, 3, 4, 5};
  TensorPtr t = from_blob(data, {2, 3});
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->const_data_ptr<float>(), data);
  EXPECT_EQ(t->strides()[0], 3);
  EXPECT_EQ(t->strides()[1], 1);
  EXPECT_EQ(t->shape_dynamism(), TensorShapeDynamism::kDynamicBound);
  TensorPtr copy = t;
  t.reset();
  EXPECT_EQ(copy->size(1), 3);  // The metadata lives while any copy does.
}

TEST(TensorPtrTest, FromBlobWithStridesDerivesTheDimOrder) {
  float data[6] = {};
  TensorPtr t = from_blob(data, {2, 3}, {1, 2});  // Column-major.
  ASSERT_NE(t, nullptr);
  EXPECT_EQ(t->dim_order()[0], 1);
  EXPECT_EQ(t->dim_order()[1], 0);
  EXPECT_EQ(from_blob(data, {2, 3}, {1}), nullptr);  // One stride for two dims.
}

TEST(TensorPtrTest, MakeTensorPtrCopiesAndConverts) {
  std::vector<float> values = {1.5f, -2.5f};
  TensorPtr t = make_tensor_ptr({2}, values);
  ASSERT_NE(t, nullptr);
  EXPECT_NE(t->const_data_ptr<float>(), values.data());
  EXPECT_EQ(t->const_data_ptr<float>()[1], -2.5f);

  TensorPtr as_int = make_tensor_ptr({2}, values, {}, {}, ScalarType::kInt);
  ASSERT_NE(as_int, nullptr);
  EXPECT_EQ(as_int->const_data_ptr<int32_t>()[0], 1);  // Truncates toward zero.
  EXPECT_EQ(as_int->const_data_ptr<int32_t>()[1], -2);

  TensorPtr half = make_tensor_ptr({2}, values, {}, {}, ScalarType::kHalf);
  ASSERT_NE(half, nullptr);
  EXPECT_EQ(static_cast<float>(half->const_data_ptr<Half>()[0]), 1.5f);

  TensorPtr channels_last = make_tensor_ptr({1, 2, 1, 1}, std::vector<int64_t>{7, 8}, {0, 2, 3, 1});
  ASSERT_NE(channels_last, nullptr);
  EXPECT_EQ(channels_last->dim_order()[3], 1);
}

TEST(TensorPtrTest, RefusalsGiveNull) {
  EXPECT_EQ(make_tensor_ptr({3}, std::vector<float>{1, 2}), nullptr);  // Count.
  EXPECT_EQ(make_tensor_ptr({2}, std::vector<float>{1, 2}, {}, {}, ScalarType::kQInt8), nullptr);
  EXPECT_EQ(full({2}, 1.0, ScalarType::kQUInt8), nullptr);
  EXPECT_EQ(empty({-2}), nullptr);
  EXPECT_EQ(randint(5, 5, {2}), nullptr);  // Empty range.
  TensorPtr none;
  EXPECT_FALSE(resize_tensor_ptr(none, {1}).ok());
}

TEST(TensorPtrTest, ResizeWithinCapacity) {
  TensorPtr t = zeros({4});
  EXPECT_TRUE(resize_tensor_ptr(t, {2}).ok());
  EXPECT_EQ(t->numel(), 2);
  EXPECT_FALSE(resize_tensor_ptr(t, {5}).ok());
}

TEST(TensorPtrTest, ConvertsToAnEValue) {
  TensorPtr t = ones({2}, ScalarType::kLong);
  EValue v = t;
  ASSERT_TRUE(v.isTensor());
  EXPECT_EQ(v.toTensor().const_data_ptr<int64_t>()[1], 1);
  EValue null_value = TensorPtr();
  ASSERT_TRUE(null_value.is_tensor());
  EXPECT_FALSE(null_value.to_tensor().defined());
}

}  // namespace
}  // namespace torchlight
