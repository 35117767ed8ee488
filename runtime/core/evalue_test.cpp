// Tests for EValue and BoxedList (evalue.h).
#include "runtime/core/evalue.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include <gtest/gtest.h>

namespace torchlight {
namespace {

static_assert(std::is_trivially_copyable<EValue>::value,
              "EValue is copied freely between value tables");

// Which is_* predicates hold, as a bit mask over Tag values.
uint32_t predicates(const EValue& v) {
  uint32_t mask = 0;
  auto set = [&](bool b, Tag t) {
    if (b) mask |= 1u << static_cast<int>(t);
  };
  set(v.is_none(), Tag::kNone);
  set(v.is_int(), Tag::kInt);
  set(v.is_double(), Tag::kDouble);
  set(v.is_bool(), Tag::kBool);
  set(v.is_string(), Tag::kString);
  set(v.is_tensor(), Tag::kTensor);
  set(v.is_int_list(), Tag::kIntList);
  set(v.is_double_list(), Tag::kDoubleList);
  set(v.is_bool_list(), Tag::kBoolList);
  set(v.is_tensor_list(), Tag::kTensorList);
  set(v.is_optional_tensor_list(), Tag::kOptionalTensorList);
  return mask;
}

// Exactly the predicate of `tag` holds, and tag() says so.
void expect_only(const EValue& v, Tag tag) {
  EXPECT_EQ(v.tag(), tag) << to_string(tag);
  EXPECT_EQ(predicates(v), 1u << static_cast<int>(tag)) << to_string(tag);
  const bool scalar = tag == Tag::kInt || tag == Tag::kDouble || tag == Tag::kBool;
  EXPECT_EQ(v.is_scalar(), scalar) << to_string(tag);
}

// A 1-d float tensor with its own storage.
struct OwnedTensor {
  SizesType sizes[1];
  DimOrderType dim_order[1] = {0};
  StridesType strides[1] = {1};
  float data[4] = {};
  TensorImpl impl;
  explicit OwnedTensor(SizesType n)
      : sizes{n}, impl(ScalarType::kFloat, 1, sizes, data, dim_order, strides) {}
  Tensor tensor() { return Tensor(&impl); }
};

TEST(TagTest, ToString) {
  EXPECT_STREQ(to_string(Tag::kNone), "None");
  EXPECT_STREQ(to_string(Tag::kInt), "Int");
  EXPECT_STREQ(to_string(Tag::kDouble), "Double");
  EXPECT_STREQ(to_string(Tag::kBool), "Bool");
  EXPECT_STREQ(to_string(Tag::kString), "String");
  EXPECT_STREQ(to_string(Tag::kTensor), "Tensor");
  EXPECT_STREQ(to_string(Tag::kIntList), "IntList");
  EXPECT_STREQ(to_string(Tag::kDoubleList), "DoubleList");
  EXPECT_STREQ(to_string(Tag::kBoolList), "BoolList");
  EXPECT_STREQ(to_string(Tag::kTensorList), "TensorList");
  EXPECT_STREQ(to_string(Tag::kOptionalTensorList), "OptionalTensorList");
  EXPECT_STREQ(to_string(static_cast<Tag>(200)), "Unknown");
}

TEST(EValueTest, None) {
  EValue v;
  expect_only(v, Tag::kNone);
  EXPECT_FALSE(v.to_optional_tensor().defined());
}

TEST(EValueTest, Int) {
  EValue v(int64_t{-9});
  expect_only(v, Tag::kInt);
  EXPECT_EQ(v.to_int(), -9);
  EValue big(std::numeric_limits<int64_t>::min());
  EXPECT_EQ(big.to_int(), std::numeric_limits<int64_t>::min());
}

TEST(EValueTest, Double) {
  EValue v(2.25);
  expect_only(v, Tag::kDouble);
  EXPECT_EQ(v.to_double(), 2.25);
  EValue f(1.5f);  // float promotes to double, not to bool.
  expect_only(f, Tag::kDouble);
  EXPECT_EQ(f.to_double(), 1.5);
}

TEST(EValueTest, Bool) {
  EValue t(true);
  EValue f(false);
  expect_only(t, Tag::kBool);
  expect_only(f, Tag::kBool);
  EXPECT_TRUE(t.to_bool());
  EXPECT_FALSE(f.to_bool());
}

TEST(EValueTest, StringBorrowsItsBytes) {
  const std::string text = "aten::add.out";
  EValue v{std::string_view(text)};
  expect_only(v, Tag::kString);
  EXPECT_EQ(v.to_string(), "aten::add.out");
  EXPECT_EQ(v.to_string().data(), text.data());
  // Embedded NULs are kept: the length, not a terminator, bounds it.
  const char with_nul[] = {'a', '\0', 'b'};
  EValue n{std::string_view(with_nul, 3)};
  EXPECT_EQ(n.to_string().size(), 3u);
}

// A string literal must not silently become a Bool (pointer-to-bool is a
// standard conversion and would beat string_view's constructor).
TEST(EValueTest, StringLiteralIsAString) {
  EValue v("relu");
  expect_only(v, Tag::kString);
  EXPECT_EQ(v.to_string(), "relu");
  const char* null_text = nullptr;
  EValue empty(null_text);
  expect_only(empty, Tag::kString);
  EXPECT_TRUE(empty.to_string().empty());
}

TEST(EValueTest, Tensor) {
  OwnedTensor owned(3);
  EValue v(owned.tensor());
  expect_only(v, Tag::kTensor);
  EXPECT_EQ(v.to_tensor().impl(), &owned.impl);
  EXPECT_EQ(v.to_optional_tensor().impl(), &owned.impl);
  // Copies share the TensorImpl: a resize is seen through both.
  EValue copy = v;
  EXPECT_EQ(copy.to_tensor().impl(), &owned.impl);
}

TEST(EValueTest, OptionalTensorOfOtherTagsIsUndefined) {
  EXPECT_FALSE(EValue(int64_t{1}).to_optional_tensor().defined());
  EXPECT_FALSE(EValue(true).to_optional_tensor().defined());
}

TEST(EValueTest, DoubleList) {
  const double values[] = {1.0, -2.5, 1e300};
  EValue v(Span<const double>(values, 3));
  expect_only(v, Tag::kDoubleList);
  Span<const double> out = v.to_double_list();
  EXPECT_EQ(out.data(), values);
  ASSERT_EQ(out.size(), 3u);
  EXPECT_EQ(out[1], -2.5);
}

TEST(EValueTest, BoolList) {
  const bool values[] = {true, false, true, true};
  EValue v(Span<const bool>(values, 4));
  expect_only(v, Tag::kBoolList);
  Span<const bool> out = v.to_bool_list();
  EXPECT_EQ(out.data(), values);
  ASSERT_EQ(out.size(), 4u);
  EXPECT_FALSE(out[1]);
  EXPECT_TRUE(out[3]);
}

TEST(EValueTest, IntListSeesUpdatesOfBoxedItems) {
  EValue items[3] = {EValue(int64_t{2}), EValue(int64_t{3}), EValue(int64_t{4})};
  EValue* boxed[3] = {&items[0], &items[1], &items[2]};
  int64_t scratch[3] = {};
  BoxedList<int64_t> list(boxed, scratch, 3);
  EXPECT_EQ(list.size(), 3u);
  EValue v(list);
  expect_only(v, Tag::kIntList);

  Span<const int64_t> a = v.to_int_list();
  ASSERT_EQ(a.size(), 3u);
  EXPECT_EQ(a[0], 2);
  EXPECT_EQ(a[1], 3);
  EXPECT_EQ(a[2], 4);
  EXPECT_EQ(a.data(), scratch) << "unboxed into the caller's scratch";

  // A symbolic size changes at run time: the list sees the new value.
  items[1] = EValue(int64_t{30});
  Span<const int64_t> b = v.to_int_list();
  EXPECT_EQ(b[1], 30);
  EXPECT_EQ(list.get()[1], 30);

  // Items may repeat.
  EValue* repeated[2] = {&items[2], &items[2]};
  int64_t scratch2[2] = {};
  EValue r(BoxedList<int64_t>(repeated, scratch2, 2));
  items[2] = EValue(int64_t{-1});
  EXPECT_EQ(r.to_int_list()[0], -1);
  EXPECT_EQ(r.to_int_list()[1], -1);
}

TEST(EValueTest, EmptyLists) {
  EValue ints{BoxedList<int64_t>()};
  EXPECT_TRUE(ints.to_int_list().empty());
  EValue tensors(BoxedList<Tensor>(), false);
  EXPECT_TRUE(tensors.to_tensor_list().empty());
}

TEST(EValueTest, TensorListSeesUpdatesOfBoxedItems) {
  OwnedTensor t0(1), t1(2), t2(3);
  EValue items[2] = {EValue(t0.tensor()), EValue(t1.tensor())};
  EValue* boxed[2] = {&items[0], &items[1]};
  Tensor scratch[2];
  EValue v(BoxedList<Tensor>(boxed, scratch, 2), /*optional=*/false);
  expect_only(v, Tag::kTensorList);
  Span<const Tensor> a = v.to_tensor_list();
  ASSERT_EQ(a.size(), 2u);
  EXPECT_EQ(a[0].impl(), &t0.impl);
  EXPECT_EQ(a[1].impl(), &t1.impl);
  EXPECT_EQ(a[1].numel(), 2);

  items[1] = EValue(t2.tensor());
  EXPECT_EQ(v.to_tensor_list()[1].impl(), &t2.impl);
}

TEST(EValueTest, OptionalTensorListWithNullAndNoneItems) {
  OwnedTensor t0(1), t2(3);
  EValue none;
  EValue items[2] = {EValue(t0.tensor()), EValue(t2.tensor())};
  EValue* boxed[4] = {&items[0], nullptr, &items[1], &none};
  Tensor scratch[4];
  EValue v(BoxedList<Tensor>(boxed, scratch, 4), /*optional=*/true);
  expect_only(v, Tag::kOptionalTensorList);
  Span<const Tensor> out = v.to_tensor_list();
  ASSERT_EQ(out.size(), 4u);
  EXPECT_EQ(out[0].impl(), &t0.impl);
  EXPECT_FALSE(out[1].defined());
  EXPECT_EQ(out[2].impl(), &t2.impl);
  EXPECT_FALSE(out[3].defined());

  // A present item becoming None is seen, and back again.
  items[0] = EValue();
  EXPECT_FALSE(v.to_tensor_list()[0].defined());
  items[0] = EValue(t2.tensor());
  EXPECT_EQ(v.to_tensor_list()[0].impl(), &t2.impl);
}

TEST(EValueTest, ScalarAsDouble) {
  EXPECT_EQ(EValue(int64_t{-3}).scalar_as_double(), -3.0);
  EXPECT_EQ(EValue(int64_t{1} << 53).scalar_as_double(), 9007199254740992.0);
  EXPECT_EQ(EValue(0.125).scalar_as_double(), 0.125);
  EXPECT_EQ(EValue(true).scalar_as_double(), 1.0);
  EXPECT_EQ(EValue(false).scalar_as_double(), 0.0);
  EXPECT_TRUE(std::isnan(EValue(std::nan("")).scalar_as_double()));
}

TEST(EValueTest, ScalarAsIntTruncatesTowardZero) {
  EXPECT_EQ(EValue(int64_t{123456789012}).scalar_as_int(), 123456789012);
  EXPECT_EQ(EValue(true).scalar_as_int(), 1);
  EXPECT_EQ(EValue(false).scalar_as_int(), 0);
  EXPECT_EQ(EValue(2.9).scalar_as_int(), 2);
  EXPECT_EQ(EValue(-2.9).scalar_as_int(), -2);
  EXPECT_EQ(EValue(-0.5).scalar_as_int(), 0);
  EXPECT_EQ(EValue(9007199254740993.0).scalar_as_int(), 9007199254740992);
  // -2^63 is exactly representable and in range.
  EXPECT_EQ(EValue(-9223372036854775808.0).scalar_as_int(), INT64_MIN);
}

// A double from a file may be anything; converting must not be undefined.
TEST(EValueTest, ScalarAsIntSaturatesOutOfRangeDoubles) {
  EXPECT_EQ(EValue(1e300).scalar_as_int(), INT64_MAX);
  EXPECT_EQ(EValue(9223372036854775808.0).scalar_as_int(), INT64_MAX);  // 2^63
  EXPECT_EQ(EValue(-1e300).scalar_as_int(), INT64_MIN);
  EXPECT_EQ(EValue(static_cast<double>(INFINITY)).scalar_as_int(), INT64_MAX);
  EXPECT_EQ(EValue(-static_cast<double>(INFINITY)).scalar_as_int(), INT64_MIN);
  EXPECT_EQ(EValue(std::nan("")).scalar_as_int(), 0);
  // The largest double below 2^63 converts exactly.
  EXPECT_EQ(EValue(9223372036854774784.0).scalar_as_int(), 9223372036854774784);
}

}  // namespace
}  // namespace torchlight
