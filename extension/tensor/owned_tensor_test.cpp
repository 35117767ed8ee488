#include "extension/tensor/owned_tensor.h"
#include "runtime/core/testing/error_matchers.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

template <typename T>
std::vector<T> vec(Span<const T> span) {
  return std::vector<T>(span.begin(), span.end());
}

const ScalarType kAllTypes[] = {
    ScalarType::kByte,         ScalarType::kChar,           ScalarType::kShort,
    ScalarType::kInt,          ScalarType::kLong,           ScalarType::kHalf,
    ScalarType::kFloat,        ScalarType::kDouble,         ScalarType::kBool,
    ScalarType::kQInt8,        ScalarType::kQUInt8,         ScalarType::kQInt32,
    ScalarType::kBFloat16,     ScalarType::kQUInt4x2,       ScalarType::kQUInt2x4,
    ScalarType::kBits16,       ScalarType::kFloat8e5m2,     ScalarType::kFloat8e4m3fn,
    ScalarType::kFloat8e5m2fnuz, ScalarType::kFloat8e4m3fnuz, ScalarType::kUInt16,
    ScalarType::kUInt32,       ScalarType::kUInt64};

TEST(OwnedTensorTest, MakeIsZeroFilledContiguousAndAligned) {
  Result<OwnedTensor> t = OwnedTensor::make(ScalarType::kFloat, {2, 3, 4});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_EQ(t->scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(t->dim(), 3u);
  EXPECT_EQ(vec(t->sizes()), (std::vector<SizesType>{2, 3, 4}));
  EXPECT_EQ(t->numel(), 24);
  EXPECT_EQ(t->nbytes(), 96u);
  const Tensor tensor = t->tensor();
  EXPECT_EQ(vec(tensor.strides()), (std::vector<StridesType>{12, 4, 1}));
  EXPECT_EQ(vec(tensor.dim_order()), (std::vector<DimOrderType>{0, 1, 2}));
  EXPECT_EQ(tensor.shape_dynamism(), TensorShapeDynamism::kStatic);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(t->data<float>()) % OwnedTensor::kDataAlignment, 0u);
  for (int i = 0; i < 24; ++i) EXPECT_EQ(t->data<float>()[i], 0.0f);
}

TEST(OwnedTensorTest, EveryDtype) {
  for (ScalarType type : kAllTypes) {
    Result<OwnedTensor> t = OwnedTensor::make(type, {3, 5});
    ASSERT_TRUE(t.ok()) << to_string(type) << ": " << t.status().message();
    EXPECT_EQ(t->nbytes(), 15 * element_size(type)) << to_string(type);
    const auto* bytes = t->tensor().const_data_ptr<uint8_t>();
    for (size_t i = 0; i < t->nbytes(); ++i) ASSERT_EQ(bytes[i], 0) << to_string(type);
  }
}

TEST(OwnedTensorTest, ZeroDimAndZeroElement) {
  Result<OwnedTensor> scalar = OwnedTensor::make(ScalarType::kLong, {});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->dim(), 0u);
  EXPECT_EQ(scalar->numel(), 1);
  EXPECT_EQ(scalar->nbytes(), 8u);
  scalar->data<int64_t>()[0] = -5;
  EXPECT_EQ(scalar->tensor().const_data_ptr<int64_t>()[0], -5);

  Result<OwnedTensor> empty = OwnedTensor::make(ScalarType::kInt, {0, 7});
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->numel(), 0);
  EXPECT_EQ(empty->nbytes(), 0u);
  EXPECT_NE(empty->tensor().const_data_ptr(), nullptr);  // Valid even with no elements.
}

TEST(OwnedTensorTest, MakeRejectsBadShapesAndTypes) {
  struct Case {
    ScalarType type;
    std::vector<SizesType> sizes;
    const char* message_part;
  };
  const SizesType kBig = std::numeric_limits<SizesType>::max();
  const Case cases[] = {
      {ScalarType::kFloat, {2, -1}, "invalid sizes [2, -1]"},
      {ScalarType::kFloat, std::vector<SizesType>(17, 1), "at most 16 dims, got 17"},
      {static_cast<ScalarType>(8), {2}, "invalid dtype 8"},
      {ScalarType::kFloat, {kBig, kBig, kBig}, "overflow"},
      // 2^62 elements fit int64, but 2^65 bytes do not fit size_t.
      {ScalarType::kLong, {1 << 30, 1 << 30, 4}, "more than SIZE_MAX bytes"},
      // No elements, but the outer stride would be (2^31 - 1)^3.
      {ScalarType::kByte, {0, kBig, kBig, kBig}, "strides of sizes [0, 2147483647"},
  };
  for (const Case& c : cases) {
    Result<OwnedTensor> t = OwnedTensor::make(c.type, c.sizes);
    ASSERT_FALSE(t.ok()) << c.message_part;
    EXPECT_THAT(t, ErrorIs(Error::kInvalidArgument));
    EXPECT_NE(std::string(t.status().message()).find(c.message_part), std::string::npos)
        << t.status().message();
  }
}

TEST(OwnedTensorTest, ChannelsLastDimOrder) {
  Result<OwnedTensor> t =
      OwnedTensor::make_with_dim_order(ScalarType::kFloat, {2, 3, 4, 5}, {0, 2, 3, 1});
  ASSERT_TRUE(t.ok()) << t.status().message();
  EXPECT_TRUE(is_channels_last_dim_order(t->tensor().dim_order()));
  EXPECT_EQ(vec(t->tensor().strides()), (std::vector<StridesType>{60, 1, 15, 3}));

  Result<OwnedTensor> bad =
      OwnedTensor::make_with_dim_order(ScalarType::kFloat, {2, 3, 4}, {0, 0, 1});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad, ErrorIs(Error::kInvalidArgument, "[0, 0, 1] is not a permutation"));
  Result<OwnedTensor> short_order =
      OwnedTensor::make_with_dim_order(ScalarType::kFloat, {2, 3, 4}, {0, 1});
  ASSERT_FALSE(short_order.ok());
}

TEST(OwnedTensorTest, FromDataCopiesAndChecksSize) {
  std::vector<int32_t> values = {1, 2, 3, 4, 5, 6};
  Result<OwnedTensor> t =
      OwnedTensor::from_data(ScalarType::kInt, {2, 3}, values.data(), values.size() * 4);
  ASSERT_TRUE(t.ok());
  values[0] = 100;  // A copy, not a view.
  EXPECT_EQ(t->data<int32_t>()[0], 1);
  EXPECT_EQ(t->data<int32_t>()[5], 6);

  Result<OwnedTensor> wrong =
      OwnedTensor::from_data(ScalarType::kInt, {2, 3}, values.data(), 20);
  ASSERT_FALSE(wrong.ok());
  EXPECT_THAT(wrong, ErrorIs(Error::kInvalidArgument));
  EXPECT_STREQ(wrong.status().message(),
               "a int32 tensor of sizes [2, 3] holds 24 bytes, but 20 were given");

  Result<OwnedTensor> null_data = OwnedTensor::from_data(ScalarType::kInt, {2}, nullptr, 8);
  ASSERT_FALSE(null_data.ok());
  Result<OwnedTensor> empty = OwnedTensor::from_data(ScalarType::kInt, {0}, nullptr, 0);
  EXPECT_TRUE(empty.ok());
}

TEST(OwnedTensorTest, FromValuesPicksTheDtype) {
  Result<OwnedTensor> f = OwnedTensor::from_values<float>({2, 2}, {1.5f, 2, 3, 4});
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(f->data<float>()[0], 1.5f);

  Result<OwnedTensor> l = OwnedTensor::from_values({3}, std::vector<int64_t>{7, 8, 9});
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(l->scalar_type(), ScalarType::kLong);
  EXPECT_EQ(l->data<int64_t>()[2], 9);

  const bool flags[] = {true, false};
  Result<OwnedTensor> b = OwnedTensor::from_values<bool>({2}, Span<const bool>(flags));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(b->scalar_type(), ScalarType::kBool);
  EXPECT_TRUE(b->data<bool>()[0]);
  EXPECT_FALSE(b->data<bool>()[1]);

  Result<OwnedTensor> h = OwnedTensor::from_values<Half>({1}, {Half(0.5f)});
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->scalar_type(), ScalarType::kHalf);
  EXPECT_EQ(h->data<Half>()[0].bits, 0x3800);

  Result<OwnedTensor> too_few = OwnedTensor::from_values<float>({2, 2}, {1.0f});
  ASSERT_FALSE(too_few.ok());
  EXPECT_THAT(too_few, ErrorIs(Error::kInvalidArgument, "holds 16 bytes, but 4 were given"));
}

TEST(OwnedTensorTest, HandlesSurviveMoves) {
  Result<OwnedTensor> made = OwnedTensor::from_values<float>({2}, {1.0f, 2.0f});
  ASSERT_TRUE(made.ok());
  const Tensor before = made->tensor();
  OwnedTensor a = std::move(*made);
  EXPECT_FALSE(made->defined());
  EXPECT_FALSE(made->tensor().defined());
  EXPECT_EQ(a.tensor().impl(), before.impl());
  EXPECT_EQ(before.const_data_ptr<float>()[1], 2.0f);
  EXPECT_EQ(vec(before.sizes()), (std::vector<SizesType>{2}));

  std::vector<OwnedTensor> many;
  for (int i = 0; i < 50; ++i) {  // Vector growth moves the elements around.
    Result<OwnedTensor> t = OwnedTensor::from_values<int32_t>({1}, {i});
    ASSERT_TRUE(t.ok());
    many.push_back(std::move(*t));
  }
  for (int i = 0; i < 50; ++i) {
    const Tensor t = many[i].tensor();
    EXPECT_EQ(t.const_data_ptr<int32_t>()[0], i);
    EXPECT_EQ(t.sizes()[0], 1);
    EXPECT_EQ(t.strides()[0], 1);
  }

  Result<OwnedTensor> other = OwnedTensor::make(ScalarType::kDouble, {3, 3});
  ASSERT_TRUE(other.ok());
  a = std::move(*other);  // Move-assign frees the old storage (LeakSanitizer checks).
  EXPECT_EQ(a.scalar_type(), ScalarType::kDouble);
  EXPECT_EQ(a.numel(), 9);
}

TEST(OwnedTensorTest, EValueWrapsTheSameTensor) {
  Result<OwnedTensor> t = OwnedTensor::make(ScalarType::kFloat, {4});
  ASSERT_TRUE(t.ok());
  const EValue value = t->evalue();
  ASSERT_TRUE(value.is_tensor());
  EXPECT_EQ(value.to_tensor().impl(), t->tensor().impl());
}

TEST(OwnedTensorTest, CopyOfIsDeep) {
  Result<OwnedTensor> source =
      OwnedTensor::make_with_dim_order(ScalarType::kShort, {1, 2, 2, 2}, {0, 2, 3, 1},
                                       TensorShapeDynamism::kDynamicBound);
  ASSERT_TRUE(source.ok());
  for (int i = 0; i < 8; ++i) source->data<int16_t>()[i] = static_cast<int16_t>(i * 3);
  Result<OwnedTensor> copy = OwnedTensor::copy_of(source->tensor());
  ASSERT_TRUE(copy.ok()) << copy.status().message();
  EXPECT_EQ(copy->scalar_type(), ScalarType::kShort);
  EXPECT_EQ(vec(copy->sizes()), vec(source->sizes()));
  EXPECT_EQ(vec(copy->tensor().dim_order()), (std::vector<DimOrderType>{0, 2, 3, 1}));
  EXPECT_EQ(vec(copy->tensor().strides()), vec(source->tensor().strides()));
  EXPECT_EQ(copy->tensor().shape_dynamism(), TensorShapeDynamism::kDynamicBound);
  EXPECT_NE(copy->data<int16_t>(), source->data<int16_t>());
  EXPECT_EQ(0, std::memcmp(copy->data<int16_t>(), source->data<int16_t>(), 16));
  source->data<int16_t>()[0] = 99;
  EXPECT_EQ(copy->data<int16_t>()[0], 0);

  Result<OwnedTensor> undefined = OwnedTensor::copy_of(Tensor());
  ASSERT_FALSE(undefined.ok());
  EXPECT_THAT(undefined, ErrorIs(Error::kInvalidArgument, "tensor is undefined"));
}

TEST(OwnedTensorTest, ResizeFollowsDynamism) {
  Result<OwnedTensor> fixed = OwnedTensor::make(ScalarType::kFloat, {2, 3});
  ASSERT_TRUE(fixed.ok());
  const SizesType same[] = {2, 3};
  EXPECT_TRUE(fixed->resize(same).ok());
  const SizesType other[] = {3, 2};
  EXPECT_THAT(fixed->resize(other),
              ErrorIs(Error::kInvalidArgument, "static tensor has sizes [2, 3], got [3, 2]"));

  Result<OwnedTensor> bound =
      OwnedTensor::make(ScalarType::kFloat, {4, 4}, TensorShapeDynamism::kDynamicBound);
  ASSERT_TRUE(bound.ok());
  const SizesType smaller[] = {2, 4};
  ASSERT_TRUE(bound->resize(smaller).ok());
  EXPECT_EQ(bound->numel(), 8);
  const SizesType bigger[] = {5, 4};
  EXPECT_THAT(bound->resize(bigger),
              ErrorIs(Error::kInvalidArgument,
                      "sizes [5, 4] need 20 elements, more than the 16 planned"));

  Result<OwnedTensor> grow =
      OwnedTensor::make(ScalarType::kInt, {2}, TensorShapeDynamism::kDynamicUnbound);
  ASSERT_TRUE(grow.ok());
  grow->data<int32_t>()[0] = 11;
  grow->data<int32_t>()[1] = 22;
  const Tensor handle = grow->tensor();
  const SizesType large[] = {1000};
  ASSERT_TRUE(grow->resize(large).ok());
  EXPECT_EQ(handle.numel(), 1000);
  EXPECT_EQ(handle.const_data_ptr<int32_t>()[1], 22);  // Old bytes kept.
  EXPECT_EQ(handle.const_data_ptr<int32_t>()[999], 0);  // Grown bytes zeroed.
  EXPECT_EQ(reinterpret_cast<uintptr_t>(handle.const_data_ptr()) % OwnedTensor::kDataAlignment,
            0u);
  const SizesType negative[] = {-1};
  EXPECT_THAT(grow->resize(negative),
              ErrorIs(Error::kInvalidArgument, "negative, or the element count overflows"));
  EXPECT_EQ(handle.numel(), 1000);
}

}  // namespace
}  // namespace torchlight
