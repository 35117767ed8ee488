#include "kernels/portable/util/strided_view.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "kernels/portable/test/test_tensor.h"
#include "kernels/portable/util/dim_index.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

TEST(StridedViewTest, ContiguousCopy) {
  TestTensor in(kF32, {2, 3}, {0, 1, 2, 3, 4, 5});
  TestTensor out(kF32, {2, 3});
  copy_view(StridedView(out.tensor()), StridedView(in.tensor()));
  EXPECT_THAT(out.values(), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(StridedViewTest, DifferentShapesSameCountCopyInRowMajorOrder) {
  TestTensor in(kF32, {2, 3}, {0, 1, 2, 3, 4, 5});
  TestTensor out(kF32, {3, 2}, {}, dim_order({1, 0}));
  copy_view(StridedView(out.tensor()), StridedView(in.tensor()));
  EXPECT_THAT(out.values(), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(StridedViewTest, PermuteIntoChannelsLastOut) {
  TestTensor in(ScalarType::kShort, {2, 3}, {0, 1, 2, 3, 4, 5});
  TestTensor out(ScalarType::kShort, {3, 2}, {}, dim_order({1, 0}));
  StridedView src(in.tensor());
  const size_t order[] = {1, 0};
  src.permute(order);
  copy_view(StridedView(out.tensor()), src);
  EXPECT_THAT(out.values(), ElementsAre(0, 3, 1, 4, 2, 5));
}

TEST(StridedViewTest, SelectNarrowFlipInsert) {
  TestTensor in(ScalarType::kLong, {3, 4}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  {
    StridedView v(in.tensor());
    v.select(0, 1);  // [4, 5, 6, 7]
    v.flip(0);       // [7, 6, 5, 4]
    v.narrow(0, 1, 2, 2);  // [6, 4]
    TestTensor out(ScalarType::kLong, {2});
    copy_view(StridedView(out.tensor()), v);
    EXPECT_THAT(out.values(), ElementsAre(6, 4));
  }
  {
    StridedView v(in.tensor());
    v.narrow(1, 3, 1);      // column 3: [3], [7], [11]
    v.insert(0, 2, 0);      // broadcast twice
    TestTensor out(ScalarType::kLong, {2, 3, 1});
    copy_view(StridedView(out.tensor()), v);
    EXPECT_THAT(out.values(), ElementsAre(3, 7, 11, 3, 7, 11));
  }
}

TEST(StridedViewTest, SplitForRepeat) {
  // out [4] viewed as [2, 2], source [2] broadcast along the outer part.
  TestTensor in(ScalarType::kByte, {2}, {7, 9});
  TestTensor out(ScalarType::kByte, {4});
  StridedView dst(out.tensor());
  dst.split(0, 2, 2);
  StridedView src(in.tensor());
  src.insert(0, 2, 0);
  copy_view(dst, src);
  EXPECT_THAT(out.values(), ElementsAre(7, 9, 7, 9));
}

TEST(StridedViewTest, RangeCopy) {
  TestTensor in(kF32, {2, 2}, {1, 2, 3, 4}, dim_order({1, 0}));
  TestTensor out(kF32, {4});
  StridedView dst(out.tensor());
  StridedView src(in.tensor());
  copy_view_range(dst, 0, src, 3, 1);
  copy_view_range(dst, 1, src, 0, 3);
  EXPECT_THAT(out.values(), ElementsAre(4, 1, 2, 3));
}

TEST(StridedViewTest, ConvertingCopy) {
  TestTensor in(ScalarType::kDouble, {3}, {-1.5, 0, 2.75});
  TestTensor as_int(ScalarType::kInt, {3});
  TestTensor as_bool(ScalarType::kBool, {3});
  ASSERT_TRUE(copy_view_converting(StridedView(as_int.tensor()), ScalarType::kInt, "out",
                                   StridedView(in.tensor()), ScalarType::kDouble, "self")
                  .ok());
  ASSERT_TRUE(copy_view_converting(StridedView(as_bool.tensor()), ScalarType::kBool, "out",
                                   StridedView(in.tensor()), ScalarType::kDouble, "self")
                  .ok());
  EXPECT_THAT(as_int.values(), ElementsAre(-1, 0, 2));
  EXPECT_THAT(as_bool.values(), ElementsAre(1, 0, 1));
}

TEST(StridedViewTest, ConvertingCopyRejectsNonRealDtype) {
  TestTensor in(ScalarType::kQInt8, {1});
  TestTensor out(kF32, {1});
  Status s = copy_view_converting(StridedView(out.tensor()), kF32, "out", StridedView(in.tensor()),
                                  ScalarType::kQInt8, "self");
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'self'"));
}

TEST(StridedViewTest, FillAndZeroElementViews) {
  TestTensor out(ScalarType::kShort, {2, 2}, {}, dim_order({1, 0}));
  const int16_t value = -3;
  fill_view(StridedView(out.tensor()), &value);
  EXPECT_THAT(out.values(), ElementsAre(-3, -3, -3, -3));
  TestTensor empty(ScalarType::kShort, {0, 2});
  fill_view(StridedView(empty.tensor()), &value);  // Writes nothing.
  copy_view(StridedView(empty.tensor()), StridedView(empty.tensor()));
}

TEST(DimIndexTest, WrapDim) {
  size_t d = 99;
  ASSERT_TRUE(wrap_dim(-1, 3, "dim", &d).ok());
  EXPECT_EQ(d, 2u);
  ASSERT_TRUE(wrap_dim(-1, 0, "dim", &d).ok());
  EXPECT_EQ(d, 0u);
  Status s = wrap_dim(3, 3, "dim", &d);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "argument 'dim' is 3"));
  EXPECT_THAT(s.message(), HasSubstr("-3..2"));
  EXPECT_FALSE(wrap_dim(1, 0, "dim", &d).ok());
}

TEST(DimIndexTest, IndexValues) {
  int64_t v = 0;
  ASSERT_TRUE(check_index_value(-3, 3, 0, true, "index", &v).ok());
  EXPECT_EQ(v, 0);
  EXPECT_FALSE(check_index_value(-1, 3, 0, false, "index", &v).ok());
  Status s = check_index_value(3, 3, 1, true, "index", &v);
  EXPECT_THAT(s.message(), HasSubstr("index 3 is out of bounds for dimension 1 with size 3"));
  EXPECT_FALSE(check_index_value(-4, 3, 0, true, "index", &v).ok());
  EXPECT_FALSE(check_index_value(0, 0, 0, true, "index", &v).ok());
}

TEST(DimIndexTest, SizesFromList) {
  ShapeBuffer shape;
  const int64_t good[] = {2, 0, 3};
  ASSERT_TRUE(sizes_from_list(good, "size", &shape).ok());
  EXPECT_EQ(shape.dim, 3u);
  EXPECT_EQ(shape.numel(), 0);
  const int64_t negative[] = {2, -1};
  EXPECT_THAT(sizes_from_list(negative, "size", &shape).message(), HasSubstr("'size'"));
  const int64_t huge[] = {int64_t{1} << 40};
  EXPECT_FALSE(sizes_from_list(huge, "size", &shape).ok());
}

}  // namespace
}  // namespace torchlight::portable
