// TensorLayout::create: the checks a layout from a (possibly corrupt) data
// file must pass, and the byte count.
#include "runtime/core/tensor_layout.h"

#include <cstdint>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace {

using testing::ErrorIs;

TEST(TensorLayoutTest, KeepsSizesDimOrderAndCountsBytes) {
  const int32_t sizes[] = {2, 3, 5};
  const uint8_t order[] = {0, 2, 1};
  auto layout = TensorLayout::create(ScalarType::kFloat, sizes, order);
  ASSERT_TRUE(layout.ok()) << layout.status().message();
  EXPECT_EQ(layout->scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(layout->nbytes(), 2u * 3 * 5 * 4);
  ASSERT_EQ(layout->sizes().size(), 3u);
  EXPECT_EQ(layout->sizes().data(), sizes);
  EXPECT_EQ(layout->dim_order()[1], 2);
  // A scalar holds one element; an empty dim holds none.
  EXPECT_EQ(TensorLayout::create(ScalarType::kHalf, {}, {})->nbytes(), 2u);
  const int32_t empty[] = {4, 0};
  const uint8_t order2[] = {0, 1};
  EXPECT_EQ(TensorLayout::create(ScalarType::kLong, empty, order2)->nbytes(), 0u);
}

TEST(TensorLayoutTest, RejectsWhatCannotDescribeATensor) {
  const int32_t sizes[] = {2, 3};
  const uint8_t order[] = {0, 1};
  const uint8_t one[] = {0};
  EXPECT_THAT(TensorLayout::create(ScalarType::kFloat, sizes, one),
              ErrorIs(Error::kInvalidArgument, "2 sizes but 1 dim order entries"));
  const int32_t negative[] = {2, -1};
  EXPECT_THAT(TensorLayout::create(ScalarType::kFloat, negative, order),
              ErrorIs(Error::kInvalidArgument, "size 1 is negative (-1)"));
  const uint8_t repeated[] = {1, 1};
  EXPECT_THAT(TensorLayout::create(ScalarType::kFloat, sizes, repeated),
              ErrorIs(Error::kInvalidArgument, "dim order entry 1 (1)"));
  const uint8_t outside[] = {0, 2};
  EXPECT_THAT(TensorLayout::create(ScalarType::kFloat, sizes, outside),
              ErrorIs(Error::kInvalidArgument, "dim order entry 1 (2)"));
  const int32_t huge[] = {INT32_MAX, INT32_MAX, INT32_MAX};
  const uint8_t order3[] = {0, 1, 2};
  EXPECT_THAT(TensorLayout::create(ScalarType::kDouble, huge, order3),
              ErrorIs(Error::kInvalidArgument, "byte count overflows"));
  EXPECT_THAT(TensorLayout::create(static_cast<ScalarType>(99), sizes, order),
              ErrorIs(Error::kInvalidArgument, "unknown dtype 99"));
}

}  // namespace
}  // namespace torchlight
