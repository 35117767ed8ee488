#include "devtools/bundled_program/tensor_compare.h"

#include <cmath>
#include <limits>
#include <vector>

#include <gtest/gtest.h>

#include "runtime/core/half.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace bundled {
namespace {

using testing::ErrorIs;

// A contiguous tensor over `values`, which must outlive it.
template <typename T>
struct Owned {
  Owned(ScalarType type, std::vector<SizesType> sizes, std::vector<T> values)
      : sizes_(std::move(sizes)), values_(std::move(values)) {
    for (size_t d = 0; d < sizes_.size(); ++d) order_.push_back(static_cast<DimOrderType>(d));
    strides_.resize(sizes_.size());
    EXPECT_TRUE(compute_strides({sizes_.data(), sizes_.size()}, {order_.data(), order_.size()},
                                strides_.data()));
    impl_ = std::make_unique<TensorImpl>(type, sizes_.size(), sizes_.data(), values_.data(),
                                         order_.data(), strides_.data());
  }
  Tensor tensor() const { return Tensor(impl_.get()); }

  std::vector<SizesType> sizes_;
  std::vector<T> values_;
  std::vector<DimOrderType> order_;
  std::vector<StridesType> strides_;
  std::unique_ptr<TensorImpl> impl_;
};

Owned<float> floats(std::vector<float> v) {
  const auto n = static_cast<SizesType>(v.size());  // Before v is moved from.
  return Owned<float>(ScalarType::kFloat, {n}, std::move(v));
}

constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kInf = std::numeric_limits<float>::infinity();

TEST(TensorCompare, FloatWithinToleranceOfTheActualValuePasses) {
  // Bound is atol + rtol x |actual|: 1e-8 + 1e-5 x 100 = 1.00000001e-3.
  auto actual = floats({100.0f, 0.0f});
  auto expected = floats({100.0009f, 5e-9f});
  TensorComparison r = compare_tensors(actual.tensor(), expected.tensor(), 1e-5, 1e-8);
  EXPECT_TRUE(r.passed) << r.mismatch.message();
  EXPECT_NEAR(r.stats.max_abs_error, 9e-4, 1e-5);
  EXPECT_EQ(r.stats.elements, 2);
}

TEST(TensorCompare, FloatOutsideToleranceNamesTheFirstBadElement) {
  auto actual = floats({1.0f, 2.0f, 3.0f, 4.0f});
  auto expected = floats({1.0f, 2.0f, 3.01f, 4.5f});
  TensorComparison r = compare_tensors(actual.tensor(), expected.tensor(), 1e-5, 1e-8);
  EXPECT_FALSE(r.passed);
  EXPECT_THAT(r.mismatch, ErrorIs(Error::kInvalidArgument, "element 2 is 3, expected 3.0099999"));
  EXPECT_NEAR(r.stats.max_abs_error, 0.5, 1e-6);
  EXPECT_NEAR(r.stats.mean_abs_error, (0.01 + 0.5) / 4, 1e-6);
}

TEST(TensorCompare, NanMatchesNanAndInfinitiesMatchBySign) {
  auto actual = floats({kNan, kInf, -kInf});
  auto expected = floats({kNan, kInf, -kInf});
  TensorComparison same = compare_tensors(actual.tensor(), expected.tensor(), 0, 0);
  EXPECT_TRUE(same.passed);
  EXPECT_EQ(same.stats.max_abs_error, 0.0);

  auto flipped = floats({kNan, -kInf, -kInf});
  EXPECT_THAT(compare_tensors(actual.tensor(), flipped.tensor(), 1, 1).mismatch,
              ErrorIs(Error::kInvalidArgument, "element 1"));
  auto number = floats({1.0f, kInf, -kInf});
  TensorComparison nan_vs_number = compare_tensors(actual.tensor(), number.tensor(), 1, 1);
  EXPECT_THAT(nan_vs_number.mismatch, ErrorIs(Error::kInvalidArgument, "element 0"));
  EXPECT_TRUE(std::isnan(nan_vs_number.stats.max_abs_error));
}

TEST(TensorCompare, HalfUsesTheTolerance) {
  Owned<uint16_t> actual(ScalarType::kHalf, {2}, {Half::from_float(1.0f), Half::from_float(2.0f)});
  Owned<uint16_t> expected(ScalarType::kHalf, {2},
                           {Half::from_float(1.0f), Half::from_float(2.001953125f)});
  EXPECT_TRUE(compare_tensors(actual.tensor(), expected.tensor(), 1e-3, 0).passed);
  EXPECT_FALSE(compare_tensors(actual.tensor(), expected.tensor(), 1e-4, 0).passed);
}

TEST(TensorCompare, IntegersCompareExactlyWhateverTheTolerance) {
  Owned<int32_t> actual(ScalarType::kInt, {2, 2}, {1, 2, 3, 4});
  Owned<int32_t> same(ScalarType::kInt, {2, 2}, {1, 2, 3, 4});
  Owned<int32_t> off(ScalarType::kInt, {2, 2}, {1, 2, 3, 5});
  EXPECT_TRUE(compare_tensors(actual.tensor(), same.tensor(), 0, 0).passed);
  TensorComparison r = compare_tensors(actual.tensor(), off.tensor(), 1.0, 10.0);
  EXPECT_FALSE(r.passed);
  EXPECT_THAT(r.mismatch, ErrorIs(Error::kInvalidArgument, "element 3 is 4, expected 5 (int32"));
  EXPECT_EQ(r.stats.max_abs_error, 1.0);
}

TEST(TensorCompare, DtypeAndSizesMustBeEqual) {
  Owned<int32_t> ints(ScalarType::kInt, {4}, {1, 2, 3, 4});
  auto fl = floats({1, 2, 3, 4});
  EXPECT_THAT(compare_tensors(ints.tensor(), fl.tensor(), 1, 1).mismatch,
              ErrorIs(Error::kInvalidType, "dtype is int32, expected float32"));
  Owned<float> reshaped(ScalarType::kFloat, {2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(compare_tensors(reshaped.tensor(), fl.tensor(), 1, 1).mismatch,
              ErrorIs(Error::kInvalidArgument, "sizes are [2, 2], expected [4]"));
}

TEST(TensorCompare, ZeroElementTensorsPass) {
  Owned<float> a(ScalarType::kFloat, {0, 3}, {});
  Owned<float> b(ScalarType::kFloat, {0, 3}, {});
  EXPECT_TRUE(compare_tensors(a.tensor(), b.tensor(), 0, 0).passed);
}

TEST(ErrorStats, MergeWeightsTheMeansByElements) {
  ErrorStats total;
  total.merge(ErrorStats{1, 4.0, 4.0, 1.0, 1.0, true});
  total.merge(ErrorStats{3, 2.0, 0.0, 3.0, 0.0, true});
  EXPECT_EQ(total.elements, 4);
  EXPECT_DOUBLE_EQ(total.mean_abs_error, 1.0);
  EXPECT_DOUBLE_EQ(total.max_abs_error, 4.0);
  EXPECT_DOUBLE_EQ(total.max_rel_error, 3.0);
}

}  // namespace
}  // namespace bundled
}  // namespace torchlight
