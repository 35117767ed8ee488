#include "kernels/portable/util/broadcast.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::strides;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

std::vector<SizesType> shape_of(const BroadcastShape& s) {
  return std::vector<SizesType>(s.sizes, s.sizes + s.dim);
}

Status broadcast(std::vector<std::vector<SizesType>> shapes, BroadcastShape* out) {
  std::vector<std::unique_ptr<TestTensor>> tensors;
  std::vector<NamedTensor> named;
  static const char* kNames[] = {"a", "b", "c", "d"};
  for (size_t i = 0; i < shapes.size(); ++i) {
    tensors.push_back(std::make_unique<TestTensor>(kF32, shapes[i]));
    named.push_back({tensors.back()->tensor(), kNames[i]});
  }
  return compute_broadcast_shape(Span<const NamedTensor>(named.data(), named.size()), out);
}

TEST(BroadcastShapeTest, AtenRules) {
  BroadcastShape s;
  ASSERT_TRUE(broadcast({{2, 3}, {3}}, &s).ok());
  EXPECT_THAT(shape_of(s), ElementsAre(2, 3));
  ASSERT_TRUE(broadcast({{2, 1}, {1, 3}}, &s).ok());
  EXPECT_THAT(shape_of(s), ElementsAre(2, 3));
  ASSERT_TRUE(broadcast({{}, {4, 2}}, &s).ok());
  EXPECT_THAT(shape_of(s), ElementsAre(4, 2));
  ASSERT_TRUE(broadcast({{}, {}}, &s).ok());
  EXPECT_EQ(s.dim, 0u);
  ASSERT_TRUE(broadcast({{0, 3}, {1}}, &s).ok());
  EXPECT_THAT(shape_of(s), ElementsAre(0, 3));
  ASSERT_TRUE(broadcast({{5, 1, 1}, {1, 4, 1}, {3}}, &s).ok());
  EXPECT_THAT(shape_of(s), ElementsAre(5, 4, 3));
}

TEST(BroadcastShapeTest, ConflictNamesBothInputsAndDimension) {
  BroadcastShape s;
  Status st = broadcast({{2, 3}, {4}}, &s);
  EXPECT_THAT(st, ErrorIs(Error::kInvalidArgument,
                          "shapes [2, 3] ('a') and [4] ('b') do not broadcast: size 3"));
  EXPECT_STREQ(st.message(),
               "shapes [2, 3] ('a') and [4] ('b') do not broadcast: size 3 vs 4 at dimension 1 "
               "of the result");
  EXPECT_THAT(broadcast({{0}, {3}}, &s),
              ErrorIs(Error::kInvalidArgument,
                      "shapes [0] ('a') and [3] ('b') do not broadcast: size 0 vs"));
  // The conflict is reported against the input that set the size.
  Status three = broadcast({{1, 3}, {2, 1}, {4, 1}}, &s);
  EXPECT_THAT(three.message(), HasSubstr("[2, 1] ('b') and [4, 1] ('c')"));
}

TEST(BroadcastShapeTest, BroadcastsTo) {
  const SizesType to[] = {2, 3};
  const SizesType row[] = {3};
  const SizesType col[] = {2, 1};
  const SizesType bad[] = {2};
  const SizesType big[] = {1, 2, 3};
  EXPECT_TRUE(broadcasts_to(Span<const SizesType>(row), to));
  EXPECT_TRUE(broadcasts_to(Span<const SizesType>(col), to));
  EXPECT_TRUE(broadcasts_to({}, to));
  EXPECT_FALSE(broadcasts_to(Span<const SizesType>(bad), to));
  EXPECT_FALSE(broadcasts_to(Span<const SizesType>(big), to));
}

// Offsets from for_each, one vector per operand.
std::vector<std::vector<int64_t>> walk(const BroadcastIndexer& indexer) {
  std::vector<std::vector<int64_t>> out(indexer.num_operands());
  indexer.for_each([&](const int64_t* offsets) {
    for (size_t i = 0; i < indexer.num_operands(); ++i) out[i].push_back(offsets[i]);
  });
  return out;
}

TEST(BroadcastIndexerTest, BroadcastOperandsGetStrideZero) {
  TestTensor out(kF32, {2, 3});
  TestTensor row(kF32, {3});
  TestTensor col(kF32, {2, 1});
  const NamedTensor ops[] = {{out.tensor(), "out"}, {row.tensor(), "row"}, {col.tensor(), "col"}};
  const SizesType shape[] = {2, 3};
  BroadcastIndexer indexer;
  ASSERT_TRUE(indexer.init(shape, ops).ok());
  EXPECT_EQ(indexer.numel(), 6);
  auto offsets = walk(indexer);
  EXPECT_THAT(offsets[0], ElementsAre(0, 1, 2, 3, 4, 5));
  EXPECT_THAT(offsets[1], ElementsAre(0, 1, 2, 0, 1, 2));
  EXPECT_THAT(offsets[2], ElementsAre(0, 0, 0, 1, 1, 1));
}

TEST(BroadcastIndexerTest, FollowsStridesOfPermutedAndGappedOperands) {
  TestTensor out(kF32, {2, 3});
  TestTensor permuted(kF32, {2, 3}, {}, dim_order({1, 0}));  // strides [1, 2]
  TestTensor gapped(kF32, {2, 3}, {}, strides({8, 2}));
  const NamedTensor ops[] = {
      {out.tensor(), "out"}, {permuted.tensor(), "p"}, {gapped.tensor(), "g"}};
  const SizesType shape[] = {2, 3};
  BroadcastIndexer indexer;
  ASSERT_TRUE(indexer.init(shape, ops).ok());
  auto offsets = walk(indexer);
  EXPECT_THAT(offsets[1], ElementsAre(0, 2, 4, 1, 3, 5));
  EXPECT_THAT(offsets[2], ElementsAre(0, 2, 4, 8, 10, 12));
}

TEST(BroadcastIndexerTest, OffsetsAtMatchesForEach) {
  TestTensor out(kF32, {3, 1, 4, 2}, {}, dim_order({0, 2, 3, 1}));
  TestTensor a(kF32, {4, 1}, {}, dim_order({1, 0}));
  TestTensor b(kF32, {3, 1, 1, 2});
  const NamedTensor ops[] = {{out.tensor(), "out"}, {a.tensor(), "a"}, {b.tensor(), "b"}};
  const SizesType shape[] = {3, 1, 4, 2};
  BroadcastIndexer indexer;
  ASSERT_TRUE(indexer.init(shape, ops).ok());
  auto offsets = walk(indexer);
  ASSERT_EQ(offsets[0].size(), 24u);
  for (int64_t i = 0; i < indexer.numel(); ++i) {
    int64_t at[BroadcastIndexer::kMaxOperands];
    indexer.offsets_at(i, at);
    for (size_t op = 0; op < 3; ++op) EXPECT_EQ(at[op], offsets[op][i]) << i << " " << op;
  }
  // Row-major logical order: element (i, 0, k, l) of a contiguous shape
  // [3, 1, 4, 2] is at 8i + 2k + l; b ignores k.
  EXPECT_EQ(offsets[2][2 * 1 + 1], 1);  // (0, 0, 1, 1) -> b(0, 0, 0, 1)
  EXPECT_EQ(offsets[2][8 + 3], 3);      // (1, 0, 1, 1) -> b(1, 0, 0, 1) = 2 + 1
}

// for_each_run over any split of [0, numel) yields, run by run and element
// by element (offset + k * run_stride), the offsets for_each does.
TEST(BroadcastIndexerTest, RunsOverAnySplitMatchForEach) {
  TestTensor out(kF32, {3, 1, 4, 2}, {}, dim_order({0, 2, 3, 1}));
  TestTensor a(kF32, {4, 1}, {}, dim_order({1, 0}));
  TestTensor b(kF32, {3, 1, 1, 2});
  TestTensor c(kF32, {3, 1, 4, 2});
  const NamedTensor ops[] = {
      {out.tensor(), "out"}, {a.tensor(), "a"}, {b.tensor(), "b"}, {c.tensor(), "c"}};
  const SizesType shape[] = {3, 1, 4, 2};
  BroadcastIndexer indexer;
  ASSERT_TRUE(indexer.init(shape, ops).ok());
  const auto expected = walk(indexer);
  const int64_t n = indexer.numel();
  for (int64_t cut = 0; cut <= n; ++cut) {
    std::vector<std::vector<int64_t>> got(4);
    int64_t longest = 0;
    for (auto [begin, end] : {std::pair<int64_t, int64_t>{0, cut}, {cut, n}}) {
      indexer.for_each_run(begin, end, [&](const int64_t* at, int64_t length) {
        longest = std::max(longest, length);
        for (int64_t k = 0; k < length; ++k) {
          for (size_t op = 0; op < 4; ++op) got[op].push_back(at[op] + k * indexer.run_stride(op));
        }
      });
    }
    for (size_t op = 0; op < 4; ++op) EXPECT_EQ(got[op], expected[op]) << "cut " << cut;
    EXPECT_LE(longest, 2);  // Runs stay inside the innermost merged dimension.
  }
  // A 0-d walk is one run of one element at offset 0.
  TestTensor scalar(kF32, {});
  const NamedTensor one[] = {{scalar.tensor(), "s"}};
  ASSERT_TRUE(indexer.init({}, one).ok());
  int runs = 0;
  indexer.for_each_run(0, 1, [&](const int64_t* at, int64_t length) {
    ++runs;
    EXPECT_EQ(at[0], 0);
    EXPECT_EQ(length, 1);
  });
  EXPECT_EQ(runs, 1);
}

TEST(BroadcastIndexerTest, ZeroDimAndEmpty) {
  TestTensor scalar(kF32, {});
  const NamedTensor one[] = {{scalar.tensor(), "s"}};
  BroadcastIndexer indexer;
  ASSERT_TRUE(indexer.init({}, one).ok());
  EXPECT_EQ(indexer.numel(), 1);
  EXPECT_THAT(walk(indexer)[0], ElementsAre(0));

  TestTensor empty(kF32, {2, 0});
  const NamedTensor two[] = {{empty.tensor(), "e"}, {scalar.tensor(), "s"}};
  const SizesType shape[] = {2, 0};
  ASSERT_TRUE(indexer.init(shape, two).ok());
  EXPECT_EQ(indexer.numel(), 0);
  EXPECT_TRUE(walk(indexer)[0].empty());
}

TEST(BroadcastIndexerTest, RejectsNonBroadcastingOperandAndTooManyOperands) {
  TestTensor a(kF32, {4});
  const NamedTensor ops[] = {{a.tensor(), "a"}};
  const SizesType shape[] = {2, 3};
  BroadcastIndexer indexer;
  Status s = indexer.init(shape, ops);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'a' with shape [4] does not broadcast to shape [2,"));
  EXPECT_STREQ(s.message(), "argument 'a' with shape [4] does not broadcast to shape [2, 3]");

  TestTensor b(kF32, {3});
  std::vector<NamedTensor> many(BroadcastIndexer::kMaxOperands + 1, NamedTensor{b.tensor(), "b"});
  EXPECT_EQ(indexer.init(Span<const SizesType>(shape).subspan(1, 1),
                         Span<const NamedTensor>(many.data(), many.size()))
                .code(),
            Error::kInvalidArgument);
}

}  // namespace
}  // namespace torchlight::portable
