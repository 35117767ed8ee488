// Tests for Tensor, TensorImpl and the shape helpers (tensor.h). Expected
// strides were printed by torch 2.6 in the toolchain:
//   torch.empty(sizes).stride()
//   torch.empty(sizes, memory_format=torch.channels_last).stride()
//   torch.empty(4, 2, 3).permute(1, 2, 0).stride()   # dim order (2, 0, 1)
#include "runtime/core/tensor.h"
#include "runtime/core/testing/error_matchers.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace torchlight {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

constexpr SizesType kInt32Max = INT32_MAX;

// gmock's container matchers need const_iterator, which Span lacks.
template <typename T>
std::vector<std::remove_const_t<T>> vec(Span<T> span) {
  return {span.begin(), span.end()};
}

std::vector<StridesType> strides_for(std::vector<SizesType> sizes,
                                     std::vector<DimOrderType> dim_order) {
  std::vector<StridesType> strides(sizes.size(), -99);
  const bool ok = compute_strides({sizes.data(), sizes.size()},
                                  {dim_order.data(), dim_order.size()}, strides.data());
  EXPECT_TRUE(ok);
  return strides;
}

std::vector<DimOrderType> contiguous_order(size_t dim) {
  std::vector<DimOrderType> order(dim);
  for (size_t i = 0; i < dim; ++i) order[i] = static_cast<DimOrderType>(i);
  return order;
}

std::string format(std::vector<SizesType> sizes, size_t out_size = 128) {
  std::vector<char> out(out_size + 1, '#');
  const char* result = format_sizes({sizes.data(), sizes.size()}, out.data(), out_size);
  EXPECT_EQ(result, out.data());
  EXPECT_EQ(out[out_size], '#') << "wrote past out_size";
  return out_size == 0 ? std::string() : std::string(out.data());
}

// Owns the arrays a TensorImpl borrows.
struct TensorStorage {
  std::vector<SizesType> sizes;
  std::vector<DimOrderType> dim_order;
  std::vector<StridesType> strides;
  std::vector<float> data;
  TensorImpl impl;

  TensorStorage(std::vector<SizesType> s, TensorShapeDynamism dynamism,
                std::vector<DimOrderType> order = {})
      : sizes(std::move(s)),
        dim_order(order.empty() ? contiguous_order(sizes.size()) : std::move(order)),
        strides(sizes.size()),
        data(64),
        impl(ScalarType::kFloat, sizes.size(), sizes.data(), data.data(), dim_order.data(),
             strides.data(), dynamism) {
    EXPECT_TRUE(compute_strides({sizes.data(), sizes.size()},
                                {dim_order.data(), dim_order.size()}, strides.data()));
  }
};

Status resize(TensorImpl& impl, std::initializer_list<SizesType> sizes) {
  return impl.resize({sizes.begin(), sizes.size()});
}

// ------------------------------------------------------------ compute_numel

TEST(ComputeNumelTest, ProductOfSizes) {
  int64_t n = -1;
  SizesType s234[] = {2, 3, 4};
  ASSERT_TRUE(compute_numel(s234, &n));
  EXPECT_EQ(n, 24);
  ASSERT_TRUE(compute_numel({}, &n));
  EXPECT_EQ(n, 1) << "a 0-d tensor has one element";
  SizesType with_zero[] = {5, 0, 7};
  ASSERT_TRUE(compute_numel(with_zero, &n));
  EXPECT_EQ(n, 0);
  SizesType big[] = {kInt32Max, kInt32Max};
  ASSERT_TRUE(compute_numel(big, &n));
  EXPECT_EQ(n, int64_t{kInt32Max} * kInt32Max);
}

TEST(ComputeNumelTest, NegativeSizeFails) {
  int64_t n = -7;
  SizesType sizes[] = {2, -1, 3};
  EXPECT_FALSE(compute_numel(sizes, &n));
  EXPECT_EQ(n, -7) << "numel written on failure";
}

TEST(ComputeNumelTest, OverflowFails) {
  int64_t n = -7;
  SizesType at_limit[] = {65536, 65536, 65536, 16384};  // 2^62
  ASSERT_TRUE(compute_numel(at_limit, &n));
  EXPECT_EQ(n, int64_t{1} << 62);
  SizesType over[] = {65536, 65536, 65536, 32768};  // 2^63
  n = -7;
  EXPECT_FALSE(compute_numel(over, &n));
  EXPECT_EQ(n, -7);
  SizesType way_over[] = {kInt32Max, kInt32Max, kInt32Max};
  EXPECT_FALSE(compute_numel(way_over, &n));
  // A zero after the overflow does not rescue it, and one before gives 0.
  SizesType zero_last[] = {kInt32Max, kInt32Max, kInt32Max, 0};
  EXPECT_FALSE(compute_numel(zero_last, &n));
  SizesType zero_first[] = {0, kInt32Max, kInt32Max, kInt32Max};
  ASSERT_TRUE(compute_numel(zero_first, &n));
  EXPECT_EQ(n, 0);
}

// ------------------------------------------------------------ compute_strides

TEST(ComputeStridesTest, ContiguousMatchesTorch) {
  EXPECT_THAT(strides_for({2, 3, 4}, {0, 1, 2}), ElementsAreArray({12, 4, 1}));
  EXPECT_THAT(strides_for({2, 0, 3}, {0, 1, 2}), ElementsAreArray({3, 3, 1}));
  EXPECT_THAT(strides_for({1, 3, 1, 5}, {0, 1, 2, 3}), ElementsAreArray({15, 5, 5, 1}));
  EXPECT_THAT(strides_for({0}, {0}), ElementsAreArray({1}));
  EXPECT_THAT(strides_for({5}, {0}), ElementsAreArray({1}));
  EXPECT_THAT(strides_for({3, 0, 0, 2}, {0, 1, 2, 3}), ElementsAreArray({2, 2, 2, 1}));
  EXPECT_TRUE(strides_for({}, {}).empty());
}

TEST(ComputeStridesTest, ChannelsLastMatchesTorch) {
  const std::vector<DimOrderType> nhwc = {0, 2, 3, 1};
  EXPECT_THAT(strides_for({2, 3, 4, 5}, nhwc), ElementsAreArray({60, 1, 15, 3}));
  EXPECT_THAT(strides_for({2, 1, 4, 5}, nhwc), ElementsAreArray({20, 1, 5, 1}));
  EXPECT_THAT(strides_for({2, 3, 1, 1}, nhwc), ElementsAreArray({3, 1, 3, 3}));
  EXPECT_THAT(strides_for({0, 3, 2, 2}, nhwc), ElementsAreArray({12, 1, 6, 3}));
  EXPECT_THAT(strides_for({1, 1, 1, 1}, nhwc), ElementsAreArray({1, 1, 1, 1}));
  // torch gives (0, 1, 15, 3) here: its channels-last helper multiplies by
  // a size of 0 where its contiguous one uses 1. We follow ExecuTorch and
  // use 1 throughout; an empty tensor's strides never address memory.
  EXPECT_THAT(strides_for({2, 3, 0, 5}, nhwc), ElementsAreArray({15, 1, 15, 3}));
}

TEST(ComputeStridesTest, OtherPermutationsMatchTorch) {
  EXPECT_THAT(strides_for({2, 3, 4}, {2, 0, 1}), ElementsAreArray({3, 1, 6}));
  EXPECT_THAT(strides_for({2, 3}, {1, 0}), ElementsAreArray({1, 2}));
}

TEST(ComputeStridesTest, InvalidDimOrderFailsWithoutWriting) {
  SizesType sizes[] = {2, 3, 4};
  StridesType strides[3] = {-1, -1, -1};
  const std::vector<std::vector<DimOrderType>> bad = {
      {0, 1, 1},  // duplicate
      {0, 1, 3},  // out of range
      {2, 2, 2},  // all the same
      {0, 1},     // too short
      {0, 1, 2, 3},  // too long
      {255, 0, 1},
  };
  for (const auto& order : bad) {
    EXPECT_FALSE(compute_strides(sizes, {order.data(), order.size()}, strides));
    EXPECT_THAT(strides, ElementsAreArray({-1, -1, -1}));
  }
}

TEST(ComputeStridesTest, TooManyDimsFails) {
  std::vector<SizesType> sizes(kMaxTensorDim + 1, 1);
  std::vector<DimOrderType> order = contiguous_order(kMaxTensorDim + 1);
  std::vector<StridesType> strides(kMaxTensorDim + 1, -1);
  EXPECT_FALSE(compute_strides({sizes.data(), sizes.size()}, {order.data(), order.size()},
                               strides.data()));
  sizes.pop_back();
  order.pop_back();
  EXPECT_TRUE(compute_strides({sizes.data(), sizes.size()}, {order.data(), order.size()},
                              strides.data()));
  EXPECT_EQ(strides[0], 1);
}

// Size-0 dims count as 1 in strides, so a shape with no elements can still
// have strides beyond int64. That must be a failure, not signed overflow.
TEST(ComputeStridesTest, StrideOverflowFails) {
  SizesType sizes[] = {0, kInt32Max, kInt32Max, kInt32Max};
  DimOrderType order[] = {0, 1, 2, 3};
  StridesType strides[4] = {-1, -1, -1, -1};
  EXPECT_FALSE(compute_strides(sizes, order, strides));
  EXPECT_THAT(strides, ElementsAreArray({-1, -1, -1, -1}));

  // The outermost dim's size never enters a stride, so this one fits.
  SizesType fits[] = {kInt32Max, kInt32Max, kInt32Max};
  DimOrderType order3[] = {0, 1, 2};
  StridesType s3[3];
  ASSERT_TRUE(compute_strides(fits, order3, s3));
  EXPECT_THAT(s3, ElementsAreArray(std::vector<int64_t>{int64_t{kInt32Max} * kInt32Max,
                                                         int64_t{kInt32Max}, 1}));
}

TEST(DimOrderTest, ContiguousAndChannelsLast) {
  DimOrderType c4[] = {0, 1, 2, 3};
  DimOrderType cl[] = {0, 2, 3, 1};
  DimOrderType other[] = {0, 3, 2, 1};
  DimOrderType c1[] = {0};
  EXPECT_TRUE(is_contiguous_dim_order(c4));
  EXPECT_TRUE(is_contiguous_dim_order(c1));
  EXPECT_TRUE(is_contiguous_dim_order({}));
  EXPECT_FALSE(is_contiguous_dim_order(cl));
  EXPECT_FALSE(is_contiguous_dim_order(other));
  EXPECT_TRUE(is_channels_last_dim_order(cl));
  EXPECT_FALSE(is_channels_last_dim_order(c4));
  EXPECT_FALSE(is_channels_last_dim_order(other));
  DimOrderType cl3[] = {0, 2, 1};
  EXPECT_FALSE(is_channels_last_dim_order(cl3)) << "only 4-d is channels-last";
}

// ------------------------------------------------------------ format_sizes

TEST(FormatSizesTest, Formats) {
  EXPECT_EQ(format({2, 3, 4}), "[2, 3, 4]");
  EXPECT_EQ(format({}), "[]");
  EXPECT_EQ(format({0}), "[0]");
  EXPECT_EQ(format({-1, INT32_MIN, kInt32Max}), "[-1, -2147483648, 2147483647]");
  std::vector<SizesType> many(kMaxTensorDim, 7);
  std::string expected = "[7";
  for (size_t i = 1; i < kMaxTensorDim; ++i) expected += ", 7";
  expected += "]";
  EXPECT_EQ(format(many, 256), expected);
}

TEST(FormatSizesTest, TruncatesToEveryBufferSize) {
  const std::vector<SizesType> sizes = {123, -45, 6, kInt32Max};
  const std::string full = "[123, -45, 6, 2147483647]";
  for (size_t out_size = 1; out_size <= full.size() + 3; ++out_size) {
    const std::string got = format(sizes, out_size);
    EXPECT_EQ(got, full.substr(0, std::min(full.size(), out_size - 1))) << out_size;
  }
  EXPECT_EQ(format({}, 1), "");
  EXPECT_EQ(format({}, 2), "[");
  EXPECT_EQ(format({}, 3), "[]");
}

TEST(FormatSizesTest, ZeroSizeBufferIsUntouched) {
  char out[4] = {'x', 'y', 'z', '\0'};
  SizesType sizes[] = {1, 2};
  EXPECT_EQ(format_sizes(sizes, out, 0), out);
  EXPECT_STREQ(out, "xyz");
}

// ------------------------------------------------------------ TensorImpl

TEST(TensorImplTest, Metadata) {
  TensorStorage t({2, 3, 4}, TensorShapeDynamism::kStatic);
  const TensorImpl& impl = t.impl;
  EXPECT_EQ(impl.scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(impl.dim(), 3u);
  EXPECT_EQ(impl.numel(), 24);
  EXPECT_EQ(impl.capacity_numel(), 24);
  EXPECT_EQ(impl.nbytes(), 96u);
  EXPECT_THAT(vec(impl.sizes()), ElementsAreArray({2, 3, 4}));
  EXPECT_THAT(vec(impl.strides()), ElementsAreArray({12, 4, 1}));
  EXPECT_THAT(vec(impl.dim_order()), ElementsAreArray({0, 1, 2}));
  EXPECT_EQ(impl.data(), t.data.data());
  EXPECT_EQ(impl.mutable_data(), t.data.data());
  EXPECT_EQ(impl.shape_dynamism(), TensorShapeDynamism::kStatic);
}

TEST(TensorImplTest, ScalarAndEmptyTensors) {
  SizesType none[1] = {};
  DimOrderType no_order[1] = {};
  StridesType no_strides[1] = {};
  TensorImpl scalar(ScalarType::kLong, 0, none, nullptr, no_order, no_strides);
  EXPECT_EQ(scalar.numel(), 1);
  EXPECT_EQ(scalar.nbytes(), 8u);
  EXPECT_TRUE(scalar.sizes().empty());
  EXPECT_EQ(scalar.data(), nullptr);

  TensorStorage empty({3, 0, 2}, TensorShapeDynamism::kStatic);
  EXPECT_EQ(empty.impl.numel(), 0);
  EXPECT_EQ(empty.impl.nbytes(), 0u);
}

TEST(TensorImplTest, SetDataRebinds) {
  TensorStorage t({2}, TensorShapeDynamism::kDynamicUnbound);
  float other[2] = {1.0f, 2.0f};
  t.impl.set_data(other);
  EXPECT_EQ(t.impl.data(), other);
  t.impl.set_data(nullptr);
  EXPECT_EQ(t.impl.data(), nullptr);
}

TEST(TensorImplTest, StaticResizeToSameSizesSucceeds) {
  TensorStorage t({2, 3}, TensorShapeDynamism::kStatic);
  EXPECT_TRUE(resize(t.impl, {2, 3}).ok());
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 3}));
}

TEST(TensorImplTest, StaticResizeToOtherSizesFails) {
  TensorStorage t({2, 3}, TensorShapeDynamism::kStatic);
  Status s = resize(t.impl, {3, 2});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument));
  EXPECT_STREQ(s.message(), "static tensor has sizes [2, 3], got [3, 2]");
  Status shrink = resize(t.impl, {1, 3});
  EXPECT_THAT(shrink,
              ErrorIs(Error::kInvalidArgument, "static tensor has sizes [2, 3], got [1, 3]"));
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 3}));
  EXPECT_EQ(t.impl.numel(), 6);
}

TEST(TensorImplTest, RankChangeFails) {
  TensorStorage t({2, 3}, TensorShapeDynamism::kDynamicBound);
  Status s = resize(t.impl, {6});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument));
  EXPECT_STREQ(s.message(), "cannot resize a 2-d tensor [2, 3] to 1-d [6]");
  Status up = resize(t.impl, {1, 2, 3});
  EXPECT_THAT(up, ErrorIs(Error::kInvalidArgument, "3-d [1, 2, 3]"));
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 3}));
}

TEST(TensorImplTest, NegativeSizeFails) {
  TensorStorage t({2, 3}, TensorShapeDynamism::kDynamicBound);
  Status s = resize(t.impl, {2, -3});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "[2, -3]"));
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 3}));
}

TEST(TensorImplTest, DynamicBoundResizesWithinCapacity) {
  TensorStorage t({4, 6}, TensorShapeDynamism::kDynamicBound);
  Tensor a(&t.impl);
  Tensor b(&t.impl);  // A second handle sees every resize.
  EXPECT_THAT(a.resize(Span<const SizesType>()),
              ErrorIs(Error::kInvalidArgument,
                      "cannot resize a 2-d tensor [4, 6] to 0-d []"));  // Rank 0.

  ASSERT_TRUE(resize(t.impl, {2, 5}).ok());
  EXPECT_THAT(vec(b.sizes()), ElementsAreArray({2, 5}));
  EXPECT_THAT(vec(b.strides()), ElementsAreArray({5, 1}));
  EXPECT_EQ(b.numel(), 10);
  EXPECT_EQ(b.nbytes(), 40u);
  EXPECT_EQ(t.impl.capacity_numel(), 24) << "capacity does not shrink";

  // Any shape up to the planned element count, even with larger dims.
  ASSERT_TRUE(resize(t.impl, {1, 24}).ok());
  EXPECT_THAT(vec(a.strides()), ElementsAreArray({24, 1}));
  ASSERT_TRUE(resize(t.impl, {0, 7}).ok());
  EXPECT_EQ(a.numel(), 0);
  EXPECT_THAT(vec(a.strides()), ElementsAreArray({7, 1}));
  ASSERT_TRUE(resize(t.impl, {4, 6}).ok());
  EXPECT_EQ(a.numel(), 24);
}

TEST(TensorImplTest, DynamicBoundAboveCapacityFails) {
  TensorStorage t({4, 6}, TensorShapeDynamism::kDynamicBound);
  ASSERT_TRUE(resize(t.impl, {2, 2}).ok());
  Status s = resize(t.impl, {5, 5});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument));
  EXPECT_STREQ(s.message(), "sizes [5, 5] need 25 elements, more than the 24 planned");
  // Nothing changed.
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 2}));
  EXPECT_THAT(vec(t.impl.strides()), ElementsAreArray({2, 1}));
  EXPECT_EQ(t.impl.numel(), 4);
}

TEST(TensorImplTest, DynamicBoundResizeKeepsChannelsLast) {
  TensorStorage t({2, 3, 4, 5}, TensorShapeDynamism::kDynamicBound, {0, 2, 3, 1});
  EXPECT_THAT(vec(t.impl.strides()), ElementsAreArray({60, 1, 15, 3}));
  ASSERT_TRUE(resize(t.impl, {1, 3, 2, 5}).ok());
  EXPECT_THAT(vec(t.impl.strides()), ElementsAreArray({30, 1, 15, 3}));
  EXPECT_THAT(vec(t.impl.dim_order()), ElementsAreArray({0, 2, 3, 1}));
}

TEST(TensorImplTest, DynamicUnboundGrowsCapacity) {
  TensorStorage t({2, 2}, TensorShapeDynamism::kDynamicUnbound);
  ASSERT_TRUE(resize(t.impl, {10, 10}).ok());
  EXPECT_EQ(t.impl.numel(), 100);
  EXPECT_EQ(t.impl.capacity_numel(), 100);
  EXPECT_THAT(vec(t.impl.strides()), ElementsAreArray({10, 1}));
  ASSERT_TRUE(resize(t.impl, {1, 1}).ok());
  EXPECT_EQ(t.impl.capacity_numel(), 100);
}

// Bound storage (planned memory, a caller's buffer) caps every dynamism,
// including DYNAMIC_UNBOUND, at the elements it holds.
TEST(TensorImplTest, BoundStorageCapsResize) {
  TensorStorage t({2, 2}, TensorShapeDynamism::kDynamicUnbound);
  float buffer[6];
  t.impl.bind_storage(buffer, 6);
  EXPECT_TRUE(t.impl.storage_bound());
  EXPECT_EQ(t.impl.data(), buffer);
  EXPECT_EQ(t.impl.capacity_numel(), 6);
  ASSERT_TRUE(resize(t.impl, {2, 3}).ok());
  Status s = resize(t.impl, {2, 4});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument));
  EXPECT_STREQ(s.message(), "sizes [2, 4] need 8 elements, more than the 6 its storage holds");
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 3}));

  TensorStorage bound({4}, TensorShapeDynamism::kDynamicBound);
  bound.impl.bind_storage(buffer, 2);  // A smaller buffer than planned.
  ASSERT_TRUE(resize(bound.impl, {2}).ok());
  EXPECT_THAT(resize(bound.impl, {3}),
              ErrorIs(Error::kInvalidArgument,
                      "sizes [3] need 3 elements, more than the 2 its storage holds"));
}

TEST(TensorImplTest, ResizeWithOverflowingNumelFails) {
  TensorStorage t({2, 2, 2}, TensorShapeDynamism::kDynamicUnbound);
  Status s = resize(t.impl, {kInt32Max, kInt32Max, kInt32Max});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "overflow"));
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({2, 2, 2}));
}

// Zero elements but strides beyond int64: rejected without changing the
// tensor (this used to overflow a signed multiply).
TEST(TensorImplTest, ResizeWithOverflowingStridesFails) {
  TensorStorage t({1, 2, 2, 2}, TensorShapeDynamism::kDynamicBound);
  Status s = resize(t.impl, {0, kInt32Max, kInt32Max, kInt32Max});
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "[0, 2147483647, 2147483647, 2147483647]"));
  EXPECT_THAT(vec(t.impl.sizes()), ElementsAreArray({1, 2, 2, 2}));
  EXPECT_THAT(vec(t.impl.strides()), ElementsAreArray({8, 4, 2, 1}));
  EXPECT_EQ(t.impl.numel(), 8);
}

// ------------------------------------------------------------ Tensor

TEST(TensorTest, DefaultIsUndefined) {
  Tensor t;
  EXPECT_FALSE(t.defined());
  EXPECT_EQ(t.impl(), nullptr);
}

TEST(TensorTest, ForwardsToImpl) {
  TensorStorage s({2, 3}, TensorShapeDynamism::kStatic);
  s.data[4] = 3.5f;
  Tensor t(&s.impl);
  EXPECT_TRUE(t.defined());
  EXPECT_EQ(t.impl(), &s.impl);
  EXPECT_EQ(t.scalar_type(), ScalarType::kFloat);
  EXPECT_EQ(t.dim(), 2u);
  EXPECT_EQ(t.numel(), 6);
  EXPECT_EQ(t.nbytes(), 24u);
  EXPECT_EQ(t.element_size(), 4u);
  EXPECT_EQ(t.size(0), 2);
  EXPECT_EQ(t.size(1), 3);
  EXPECT_EQ(t.const_data_ptr<float>()[4], 3.5f);
  t.mutable_data_ptr<float>()[5] = 9.0f;
  EXPECT_EQ(s.data[5], 9.0f);
  EXPECT_EQ(t.const_data_ptr(), static_cast<const void*>(s.data.data()));
  EXPECT_EQ(t.shape_dynamism(), TensorShapeDynamism::kStatic);
  EXPECT_THAT(vec(t.dim_order()), ElementsAreArray({0, 1}));
  Tensor copy = t;
  EXPECT_EQ(copy.impl(), t.impl());
}

}  // namespace
}  // namespace torchlight
