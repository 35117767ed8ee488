// Index values read from tensors are untrusted: every indexing kernel must
// turn a hostile value (INT64_MIN, INT64_MAX, one past the end) into an
// error naming the operator and the argument, without reading or writing
// out of bounds (the ASan build checks the latter). Also: outs that cannot
// be resized, and tensors without data.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::dim_order;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kI32 = ScalarType::kInt;

// A Tensor?[] EValue over tensors (null entries are None).
struct TensorList {
  explicit TensorList(std::vector<TestTensor*> tensors) {
    for (TestTensor* t : tensors) items.push_back(t != nullptr ? t->evalue() : EValue());
    for (EValue& e : items) pointers.push_back(&e);
    scratch.resize(items.size());
  }
  EValue evalue(bool optional = true) {
    return EValue(BoxedList<Tensor>(pointers.data(), scratch.data(), items.size()), optional);
  }
  std::vector<EValue> items;
  std::vector<EValue*> pointers;
  std::vector<Tensor> scratch;
};

// Hostile index values for a dimension of size 3.
const std::vector<int64_t> kHostile = {INT64_MIN, INT64_MAX, 3, -4, INT32_MAX, INT32_MIN};

// Writes `value` as element `i` of an int64 or int32 tensor (raw bytes).
void put_index(TestTensor& t, int64_t i, int64_t value) {
  char* p = static_cast<char*>(t.impl().mutable_data());
  if (t.impl().scalar_type() == kI64) {
    std::memcpy(p + i * 8, &value, 8);
  } else {
    const int32_t v = static_cast<int32_t>(value);
    std::memcpy(p + i * 4, &v, 4);
  }
}

TEST(OpIndexHostileTest, IndexTensor) {
  for (int64_t value : kHostile) {
    TestTensor self(kF32, {3, 2}, {1, 2, 3, 4, 5, 6});
    TestTensor index(kI64, {2}, {0, 0});
    put_index(index, 1, value);
    TestTensor out(kF32, {2, 2});
    TensorList indices({&index});
    KernelArgs args{self.evalue(), indices.evalue(), out.evalue(), EValue()};
    Status s = run_kernel(&index_tensor_out, "aten::index.Tensor_out", args);
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::index.Tensor_out")) << value;
    EXPECT_THAT(s.message(), HasSubstr("out of bounds")) << value;
    EXPECT_THAT(s.message(), HasSubstr("'indices'")) << value;
  }
}

TEST(OpIndexHostileTest, IndexPut) {
  TestTensor self(kF32, {3, 2});
  TestTensor index(kI64, {1});
  put_index(index, 0, INT64_MIN);
  TestTensor values(kF32, {2});
  TestTensor out(kF32, {3, 2});
  TensorList indices({&index});
  for (bool accumulate : {false, true}) {
    KernelArgs args{self.evalue(), indices.evalue(), values.evalue(), EValue(accumulate),
                    out.evalue(), EValue()};
    Status s = run_kernel(&index_put_out, "aten::index_put.out", args);
    EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'indices'"));
  }
}

TEST(OpIndexHostileTest, IndexSelectGatherScatter) {
  for (int64_t value : kHostile) {
    for (ScalarType index_type : {kI64, kI32}) {
      if (index_type == kI32 && (value > INT32_MAX || value < INT32_MIN)) continue;
      TestTensor self(kF32, {3, 2});
      TestTensor index(index_type, {1});
      put_index(index, 0, value);
      TestTensor out(kF32, {1, 2});
      KernelArgs args{self.evalue(), EValue(int64_t{0}), index.evalue(), out.evalue(), EValue()};
      Status s = run_kernel(&index_select_out, "aten::index_select.out", args);
      EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'index'")) << value;
    }
    TestTensor self(kF32, {3, 2});
    TestTensor index(kI64, {1, 1});
    put_index(index, 0, value);
    TestTensor gathered(kF32, {1, 1});
    KernelArgs gather{self.evalue(), EValue(int64_t{0}), index.evalue(), EValue(false),
                      gathered.evalue(), EValue()};
    EXPECT_THAT(run_kernel(&gather_out, "aten::gather.out", gather).message(),
                HasSubstr("'index'"));
    TestTensor src(kF32, {1, 1});
    TestTensor scattered(kF32, {3, 2});
    KernelArgs scatter{self.evalue(), EValue(int64_t{0}), index.evalue(), src.evalue(),
                       scattered.evalue(), EValue()};
    EXPECT_THAT(run_kernel(&scatter_src_out, "aten::scatter.src_out", scatter).message(),
                HasSubstr("'index'"));
    KernelArgs scatter_add{self.evalue(), EValue(int64_t{0}), index.evalue(), src.evalue(),
                           scattered.evalue(), EValue()};
    EXPECT_THAT(run_kernel(&scatter_add_out, "aten::scatter_add.out", scatter_add).message(),
                HasSubstr("'index'"));
  }
}

TEST(OpIndexTest, PermutedMaskWithOuterRows) {
  // x[:, mask] with a column-major mask: the mask cursor restarts per row.
  TestTensor self(kF32, {2, 2, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  TestTensor mask(ScalarType::kBool, {2, 3}, {1, 0, 1, 0, 1, 0}, dim_order({1, 0}));
  TestTensor out(kF32, {2, 3});
  TensorList indices({nullptr, &mask});
  KernelArgs args{self.evalue(), indices.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&index_tensor_out, "aten::index.Tensor_out", args).ok());
  EXPECT_THAT(out.values(), ElementsAre(0, 2, 4, 6, 8, 10));
}

TEST(OpIndexTest, IndicesThatDoNotBroadcastNameBothSizes) {
  TestTensor self(kF32, {3, 3});
  TestTensor rows(kI64, {2}, {0, 1});
  TestTensor cols(kI64, {3}, {0, 1, 2});
  TestTensor out(kF32, {3});
  TensorList indices({&rows, &cols});
  KernelArgs args{self.evalue(), indices.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&index_tensor_out, "aten::index.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'indices'"));
  EXPECT_THAT(s.message(), HasSubstr("do not broadcast together: size 3 against 2"));
}

TEST(OpIndexTest, MaskResultNeedsResizableOut) {
  TestTensor self(kF32, {4}, {1, 2, 3, 4});
  TestTensor mask(ScalarType::kBool, {4}, {1, 0, 1, 1});
  TestTensor out(kF32, {4});  // Static [4], the result is [3].
  TensorList indices({&mask});
  KernelArgs args{self.evalue(), indices.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&index_tensor_out, "aten::index.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'out'"));
}

TEST(OpIndexTest, TensorsWithoutData) {
  TestTensor self(kF32, {3, 2});
  TestTensor index(kI64, {1}, {1});
  index.impl().set_data(nullptr);
  TestTensor out(kF32, {1, 2});
  KernelArgs args{self.evalue(), EValue(int64_t{0}), index.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&index_select_out, "aten::index_select.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'index'"));

  TestTensor no_data(kF32, {2, 3});
  no_data.impl().set_data(nullptr);
  TestTensor permuted(kF32, {3, 2});
  const int64_t dims_values[] = {1, 0};
  EValue dim_items[] = {EValue(dims_values[0]), EValue(dims_values[1])};
  EValue* dim_pointers[] = {&dim_items[0], &dim_items[1]};
  int64_t scratch[2];
  KernelArgs permute{no_data.evalue(), EValue(BoxedList<int64_t>(dim_pointers, scratch, 2)),
                     permuted.evalue(), EValue()};
  EXPECT_THAT(run_kernel(&permute_copy_out, "aten::permute_copy.out", permute).message(),
              HasSubstr("'self'"));
}

TEST(OpIndexTest, UndefinedTensorInNonOptionalList) {
  TestTensor a(kF32, {2});
  TestTensor out(kF32, {4});
  TensorList tensors({&a, nullptr});
  KernelArgs args{tensors.evalue(/*optional=*/false), EValue(int64_t{0}), out.evalue(), EValue()};
  Status s = run_kernel(&cat_out, "aten::cat.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "'tensors'"));
}

// A bool mask is counted once and then walked again while out is written;
// an out planned over the mask could clear its bits and send the walk past
// the mask's end. Both index and index_put refuse such an out.
TEST(OpIndexHostileTest, OutOverlappingTheIndicesIsRefused) {
  std::vector<float> shared(8, 0.0f);
  TestTensor self(kF32, {4}, {1, 2, 3, 4});
  TestTensor mask(ScalarType::kBool, {4});
  std::memset(shared.data(), 1, 2);  // mask = {1, 1, 0, 0}
  mask.impl().set_data(shared.data());
  TestTensor out(kF32, {2});
  out.impl().set_data(shared.data());
  TensorList indices({&mask});
  KernelArgs args{self.evalue(), indices.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&index_tensor_out, "aten::index.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'out' overlaps the memory of argument 'indices'"));

  TestTensor values(kF32, {2}, {9, 9});
  TestTensor put_out(kF32, {4});
  put_out.impl().set_data(shared.data());
  KernelArgs put{self.evalue(), indices.evalue(), values.evalue(), EValue(false),
                 put_out.evalue(), EValue()};
  s = run_kernel(&index_put_out, "aten::index_put.out", put);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'out' overlaps the memory of argument 'indices'"));

  // Separate storage: the mask selects the first two elements. (index_put
  // copied self into its out, over the mask, before refusing: reset it.)
  std::memset(shared.data(), 0, 4);
  std::memset(shared.data(), 1, 2);
  TestTensor apart(kF32, {2});
  apart.impl().set_data(shared.data() + 4);
  KernelArgs ok{self.evalue(), indices.evalue(), apart.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&index_tensor_out, "aten::index.Tensor_out", ok).ok());
  EXPECT_THAT(std::vector<float>(shared.begin() + 4, shared.begin() + 6), ElementsAre(1, 2));
}

// nonzero counts, resizes out, then walks self again: an out over self
// would turn written coordinates into new nonzero elements and more rows
// than counted.
TEST(OpIndexHostileTest, NonzeroOutOverlappingSelfIsRefused) {
  std::vector<int64_t> shared(8, 0);
  shared[0] = 5;
  TestTensor self(kI64, {4});
  self.impl().set_data(shared.data());
  TestTensor out(kI64, {4, 1}, {}, kernel_test::dynamic_bound());
  out.impl().set_data(shared.data() + 2);  // Overlaps self's last two elements.
  KernelArgs args{self.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&nonzero_out, "aten::nonzero.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "argument 'out' overlaps the memory of argument 'self'"));

  TestTensor apart(kI64, {4, 1}, {}, kernel_test::dynamic_bound());
  apart.impl().set_data(shared.data() + 4);
  KernelArgs ok{self.evalue(), apart.evalue(), EValue()};
  shared[4] = 7;
  ASSERT_TRUE(run_kernel(&nonzero_out, "aten::nonzero.out", ok).ok());
  EXPECT_THAT(apart.sizes(), ElementsAre(1, 1));
  EXPECT_EQ(shared[4], 0) << "the one nonzero element is at index 0";
}

}  // namespace
}  // namespace torchlight::portable
