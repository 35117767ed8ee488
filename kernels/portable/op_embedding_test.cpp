// aten::embedding.out and the upsampling kernels (upsample_nearest2d.vec_out,
// upsample_bilinear2d.vec_out): gathers, hand-checked interpolation, errors.
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
using kernel_test::DoubleListArg;
using kernel_test::dynamic_bound;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

Status embedding(TestTensor& weight, TestTensor& indices, TestTensor& out) {
  KernelArgs args{weight.evalue(), indices.evalue(), EValue(int64_t{-1}), EValue(false),
                  EValue(false),   out.evalue(),     EValue()};
  return run_kernel(&embedding_out, "aten::embedding.out", args);
}

TEST(OpEmbeddingTest, GathersRows) {
  TestTensor weight(kF32, {3, 2}, {0, 1, 10, 11, 20, 21});
  TestTensor indices(ScalarType::kInt, {2, 2}, {2, 0, 1, 2});
  TestTensor out(kF32, {2, 2, 2});
  ASSERT_TRUE(embedding(weight, indices, out).ok());
  EXPECT_THAT(out.values(), ElementsAre(20, 21, 0, 1, 10, 11, 20, 21));
}

TEST(OpEmbeddingTest, AnyLayoutAndDtype) {
  TestTensor weight(ScalarType::kBool, {3, 2}, {0, 1, 1, 0, 1, 1}, dim_order({1, 0}));
  TestTensor indices(ScalarType::kLong, {}, {1});  // 0-d.
  TestTensor out(ScalarType::kBool, {4}, {}, dynamic_bound());
  ASSERT_TRUE(embedding(weight, indices, out).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(2));
  EXPECT_THAT(out.values(), ElementsAre(1, 0));
}

TEST(OpEmbeddingTest, OutOfRangeIndexFailsBeforeWriting) {
  TestTensor weight(kF32, {3, 2});
  TestTensor indices(ScalarType::kLong, {2}, {0, 3});
  TestTensor out(kF32, {2, 2}, {7, 7, 7, 7});
  Status s = embedding(weight, indices, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::embedding.out: argument 'indices' holds 3 at position "
                         "1, out of range for argument 'weight' with 3 rows"));
  EXPECT_THAT(out.values(), ElementsAre(7, 7, 7, 7));

  TestTensor negative(ScalarType::kLong, {1}, {-1});
  TestTensor out1(kF32, {1, 2});
  EXPECT_THAT(embedding(weight, negative, out1),
              ErrorIs(Error::kInvalidArgument,
                      "argument 'indices' holds -1 at position 0, out of range for"));

  TestTensor float_indices(kF32, {1});
  s = embedding(weight, float_indices, out1);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'indices' has dtype float32"));
}

Status nearest(TestTensor& input, EValue size, EValue scales, TestTensor& out) {
  KernelArgs args{input.evalue(), size, scales, out.evalue(), EValue()};
  return run_kernel(&upsample_nearest2d_vec_out, "aten::upsample_nearest2d.vec_out", args);
}

Status bilinear(TestTensor& input, EValue size, bool align_corners, EValue scales,
                TestTensor& out) {
  KernelArgs args{input.evalue(), size, EValue(align_corners), scales, out.evalue(), EValue()};
  return run_kernel(&upsample_bilinear2d_vec_out, "aten::upsample_bilinear2d.vec_out", args);
}

TEST(OpUpsampleTest, NearestRepeatsPixels) {
  TestTensor input(kF32, {1, 1, 2, 2}, {1, 2, 3, 4});
  TestTensor out(kF32, {1, 1, 3, 4});
  IntListArg size({3, 4});
  ASSERT_TRUE(nearest(input, size.evalue(), EValue(), out).ok());
  // Rows: floor(o * 2 / 3) = 0, 0, 1; columns doubled.
  EXPECT_THAT(out.values(), ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4));
}

TEST(OpUpsampleTest, NearestWithScaleFactors) {
  TestTensor input(ScalarType::kByte, {1, 1, 1, 3}, {5, 6, 7});
  TestTensor out(ScalarType::kByte, {1, 1, 1, 4});
  DoubleListArg scales({1.0, 1.5});  // Width 4.5 -> 4; source floor(o / 1.5).
  ASSERT_TRUE(nearest(input, EValue(), scales.evalue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(5, 5, 6, 7));
}

TEST(OpUpsampleTest, BilinearAlignCorners) {
  TestTensor input(kF32, {1, 1, 2, 2}, {0, 2, 4, 6});
  TestTensor out(kF32, {1, 1, 3, 3});
  IntListArg size({3, 3});
  ASSERT_TRUE(bilinear(input, size.evalue(), true, EValue(), out).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 1, 2, 2, 3, 4, 4, 5, 6));
  // Half-pixel centres: out 4 over in 2, sources -0.25 (clamped to 0),
  // 0.25, 0.75, 1.25 (upper neighbour clamped).
  TestTensor row(kF32, {1, 1, 1, 2}, {0, 4});
  TestTensor row_out(kF32, {1, 1, 1, 4});
  IntListArg size2({1, 4});
  ASSERT_TRUE(bilinear(row, size2.evalue(), false, EValue(), row_out).ok());
  EXPECT_THAT(row_out.values(), ElementsAre(0, 1, 3, 4));
}

TEST(OpUpsampleTest, Errors) {
  TestTensor input(kF32, {1, 1, 2, 2});
  TestTensor out(kF32, {1, 1, 4, 4});
  IntListArg size({4, 4});
  DoubleListArg scales({2.0, 2.0});
  Status s = nearest(input, size.evalue(), scales.evalue(), out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::upsample_nearest2d.vec_out: exactly one of arguments "
                         "'output_size' and 'scale_factors' must be given, got both"));
  DoubleListArg tiny({0.1, 0.1});
  s = bilinear(input, EValue(), false, tiny.evalue(), out);
  EXPECT_THAT(s.message(), HasSubstr("argument 'scale_factors' gives output size 0"));
  TestTensor ints(ScalarType::kInt, {1, 1, 2, 2});
  TestTensor int_out(ScalarType::kInt, {1, 1, 4, 4});
  s = bilinear(ints, size.evalue(), false, EValue(), int_out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "argument 'input' has dtype int32"));
}

// A program can plan out over indices. The kernel reads each index again
// while it writes rows, so out's first row (weights whose bytes make a huge
// int64) would have become index 1 and been read from far outside weight.
TEST(OpEmbeddingTest, OutOverlappingIndicesOrWeightIsRefused) {
  std::vector<int64_t> shared(8, 0);
  shared[1] = 1;
  TestTensor weight(kF32, {2, 4}, {1e30, 1e30, 1e30, 1e30, 0, 0, 0, 0});
  TestTensor indices(ScalarType::kLong, {2});
  indices.impl().set_data(shared.data());
  TestTensor out(kF32, {2, 4});
  out.impl().set_data(shared.data() + 1);  // Starts inside indices: a partial overlap.
  Status s = embedding(weight, indices, out);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "aten::embedding.out: argument 'out' overlaps the memory of "
                         "argument 'indices'"));
  EXPECT_EQ(shared[1], 1) << "nothing written";

  TestTensor over_weight(kF32, {2, 4});
  over_weight.impl().set_data(weight.impl().mutable_data());
  TestTensor separate(ScalarType::kLong, {2}, {1, 0});
  s = embedding(weight, separate, over_weight);
  EXPECT_THAT(s.message(), HasSubstr("argument 'out' overlaps the memory of argument 'weight'"));

  // Adjacent but disjoint storage is fine.
  TestTensor next_to(kF32, {2, 4});
  next_to.impl().set_data(shared.data() + 2);
  ASSERT_TRUE(embedding(weight, indices, next_to).ok());
  const auto* rows = reinterpret_cast<const float*>(shared.data() + 2);
  EXPECT_THAT(std::vector<float>(rows, rows + 8),
              ElementsAre(1e30f, 1e30f, 1e30f, 1e30f, 0, 0, 0, 0));
}

}  // namespace
}  // namespace torchlight::portable
