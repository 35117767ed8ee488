#include "extension/tensor/tensor_format.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <limits>
#include <string>

#include "extension/tensor/owned_tensor.h"
#include "runtime/core/half.h"

namespace torchlight {
namespace {

TEST(TensorFormatTest, LeadingValuesWithEllipsis) {
  Result<OwnedTensor> t = OwnedTensor::from_values<float>({2, 2}, {1.5f, 2, 3, 4});
  ASSERT_TRUE(t.ok());
  EXPECT_EQ(format_values(t->tensor(), 3), "[1.5, 2, 3, ...]");
  EXPECT_EQ(format_values(t->tensor(), 4), "[1.5, 2, 3, 4]");
  EXPECT_EQ(format_values(t->tensor(), 100), "[1.5, 2, 3, 4]");
  EXPECT_EQ(format_values(t->tensor(), 0), "[...]");
}

TEST(TensorFormatTest, EdgeCases) {
  EXPECT_EQ(format_values(Tensor(), 5), "<undefined>");
  Result<OwnedTensor> empty = OwnedTensor::make(ScalarType::kFloat, {0, 3});
  EXPECT_EQ(format_values(empty->tensor(), 5), "[]");
  Result<OwnedTensor> scalar = OwnedTensor::from_values<int64_t>({}, {7});
  EXPECT_EQ(format_values(scalar->tensor(), 5), "[7]");
  SizesType sizes[] = {2};
  DimOrderType dim_order[] = {0};
  StridesType strides[] = {1};
  TensorImpl unbound(ScalarType::kFloat, 1, sizes, nullptr, dim_order, strides);
  EXPECT_EQ(format_values(Tensor(&unbound), 5), "<no data>");
}

// format_values() of a 1-d tensor holding `values`.
template <typename T>
std::string show(std::initializer_list<T> values) {
  Result<OwnedTensor> t = OwnedTensor::from_values<T>({static_cast<SizesType>(values.size())},
                                                      values);
  if (!t.ok()) return t.status().message();
  return format_values(t->tensor(), 9);
}

TEST(TensorFormatTest, EveryPlainDtype) {
  const bool flags[] = {true, false, true};
  Result<OwnedTensor> b = OwnedTensor::from_values<bool>({3}, Span<const bool>(flags));
  ASSERT_TRUE(b.ok());
  EXPECT_EQ(format_values(b->tensor(), 9), "[true, false, true]");
  EXPECT_EQ(show<uint8_t>({0, 255}), "[0, 255]");
  EXPECT_EQ(show<int8_t>({-128, 127}), "[-128, 127]");
  EXPECT_EQ(show<int16_t>({-32768, 5}), "[-32768, 5]");
  EXPECT_EQ(show<int32_t>({-2147483647 - 1, 9}), "[-2147483648, 9]");
  EXPECT_EQ(show<int64_t>({std::numeric_limits<int64_t>::min(), 1}),
            "[-9223372036854775808, 1]");
  EXPECT_EQ(show<uint16_t>({65535}), "[65535]");
  EXPECT_EQ(show<uint32_t>({4294967295u}), "[4294967295]");
  EXPECT_EQ(show<uint64_t>({std::numeric_limits<uint64_t>::max()}), "[18446744073709551615]");
  EXPECT_EQ(show<Half>({Half(0.5f), Half(-2.0f)}), "[0.5, -2]");
  EXPECT_EQ(show<BFloat16>({BFloat16(3.0f), BFloat16(0.25f)}), "[3, 0.25]");
  EXPECT_EQ(show<double>({0.125, 1e-7, 123456789.0}), "[0.125, 1e-07, 1.23457e+08]");
  EXPECT_EQ(show<float>({NAN, INFINITY, -INFINITY}), "[nan, inf, -inf]");
}

TEST(TensorFormatTest, RawBytesForDtypesWithoutPlainValues) {
  Result<OwnedTensor> q = OwnedTensor::make(ScalarType::kQInt8, {2});
  q->tensor().mutable_data_ptr<uint8_t>()[0] = 0x3c;
  EXPECT_EQ(format_values(q->tensor(), 9), "[0x3c, 0x00]");
  Result<OwnedTensor> bits = OwnedTensor::make(ScalarType::kBits16, {1});
  bits->tensor().mutable_data_ptr<uint16_t>()[0] = 0x1234;
  EXPECT_EQ(format_values(bits->tensor(), 9), "[0x1234]");
}

TEST(TensorFormatTest, LogicalOrderForChannelsLast) {
  // N=1, C=2, H=1, W=2 in NHWC storage: memory holds (w0 c0, w0 c1, w1 c0, w1 c1).
  Result<OwnedTensor> t =
      OwnedTensor::make_with_dim_order(ScalarType::kInt, {1, 2, 1, 2}, {0, 2, 3, 1});
  ASSERT_TRUE(t.ok());
  for (int i = 0; i < 4; ++i) t->data<int32_t>()[i] = i;
  // Logical (c, w) order: (0,0)=0, (0,1)=2, (1,0)=1, (1,1)=3.
  EXPECT_EQ(format_values(t->tensor(), 10), "[0, 2, 1, 3]");
  EXPECT_EQ(format_values(t->tensor(), 2), "[0, 2, ...]");

  Result<OwnedTensor> cl = OwnedTensor::make_with_dim_order(ScalarType::kInt, {2, 3, 2, 2},
                                                            {0, 2, 3, 1});
  ASSERT_TRUE(cl.ok());
  // Store each element's logical index at its strided position, then the
  // printout must count up.
  const Tensor tensor = cl->tensor();
  int32_t logical = 0;
  for (int n = 0; n < 2; ++n)
    for (int c = 0; c < 3; ++c)
      for (int h = 0; h < 2; ++h)
        for (int w = 0; w < 2; ++w) {
          const int64_t offset = n * tensor.strides()[0] + c * tensor.strides()[1] +
                                 h * tensor.strides()[2] + w * tensor.strides()[3];
          cl->data<int32_t>()[offset] = logical++;
        }
  EXPECT_EQ(format_values(tensor, 6), "[0, 1, 2, 3, 4, 5, ...]");
}

}  // namespace
}  // namespace torchlight
