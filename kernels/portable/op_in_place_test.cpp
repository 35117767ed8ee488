// Outs planned in self's own memory (util/in_place.h): copy-free views whose
// call only resizes out (view_copy, squeeze/unsqueeze_copy, alias_copy,
// expand_copy, clone) and in-place updates of a buffer (index_put,
// slice_scatter, select_scatter). The kernels must leave the shared
// elements as they are, resize out, and refuse layouts they cannot handle in
// place. ASan/UBSan check that no memcpy runs between identical pointers.
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
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr ScalarType kF32 = ScalarType::kFloat;

// A second tensor over `base`'s storage with its own shape (contiguous
// unless `order` is given), as the runtime builds two planned values at one
// arena offset. `base` must outlive it.
class AliasOf {
 public:
  AliasOf(TestTensor& base, std::vector<SizesType> sizes, std::vector<DimOrderType> order = {},
          TensorShapeDynamism dynamism = TensorShapeDynamism::kDynamicBound)
      : sizes_(std::move(sizes)), order_(std::move(order)), strides_(sizes_.size()),
        impl_(make(base, dynamism)) {}

  Tensor tensor() { return Tensor(&impl_); }
  EValue evalue() { return EValue(tensor()); }
  std::vector<SizesType> sizes() const {
    return std::vector<SizesType>(impl_.sizes().begin(), impl_.sizes().end());
  }

 private:
  TensorImpl make(TestTensor& base, TensorShapeDynamism dynamism) {
    if (order_.empty()) {
      for (size_t d = 0; d < sizes_.size(); ++d) order_.push_back(static_cast<DimOrderType>(d));
    }
    compute_strides({sizes_.data(), sizes_.size()}, {order_.data(), order_.size()},
                    strides_.data());
    return TensorImpl(base.impl().scalar_type(), sizes_.size(), sizes_.data(),
                      base.impl().mutable_data(), order_.data(), strides_.data(), dynamism);
  }

  std::vector<SizesType> sizes_;
  std::vector<DimOrderType> order_;
  std::vector<StridesType> strides_;
  TensorImpl impl_;
};

TEST(OpInPlaceTest, ViewCopyIntoSelfOnlyResizes) {
  TestTensor self(kF32, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11});
  AliasOf out(self, {4, 3});  // Planned at self's offset, dynamic up to 12 elements.
  IntListArg size({3, -1});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&view_copy_out, "aten::view_copy.out", args).ok());
  EXPECT_THAT(out.sizes(), ElementsAre(3, 4));
  EXPECT_THAT(self.values(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11));
}

TEST(OpInPlaceTest, ViewCopyRefusesAPermutedSelfInPlace) {
  // self stored column-major: its row-major elements are not out's bytes.
  TestTensor self(kF32, {2, 3}, {0, 1, 2, 3, 4, 5}, dim_order({1, 0}));
  AliasOf out(self, {6});
  IntListArg size({6});
  KernelArgs args{self.evalue(), size.evalue(), out.evalue(), EValue()};
  Status s = run_kernel(&view_copy_out, "aten::view_copy.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "aten::view_copy.out"));
  EXPECT_THAT(s.message(), HasSubstr("'out' shares the memory of argument 'self'"));
}

TEST(OpInPlaceTest, ReshapeViewsIntoSelf) {
  TestTensor self(kF32, {2, 1, 3}, {1, 2, 3, 4, 5, 6});
  {
    AliasOf out(self, {2, 3});
    KernelArgs args{self.evalue(), EValue(int64_t{1}), out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&squeeze_copy_dim_out, "aten::squeeze_copy.dim_out", args).ok());
    EXPECT_THAT(out.sizes(), ElementsAre(2, 3));
  }
  {
    AliasOf out(self, {2, 1, 3, 1});
    KernelArgs args{self.evalue(), EValue(int64_t{-1}), out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&unsqueeze_copy_out, "aten::unsqueeze_copy.out", args).ok());
    EXPECT_THAT(out.sizes(), ElementsAre(2, 1, 3, 1));
  }
  {
    AliasOf out(self, {2, 1, 3});
    KernelArgs args{self.evalue(), out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&alias_copy_out, "aten::alias_copy.out", args).ok());
  }
  {
    AliasOf out(self, {2, 1, 3});
    IntListArg size({2, -1, 3});
    KernelArgs args{self.evalue(), size.evalue(), EValue(false), out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&expand_copy_out, "aten::expand_copy.out", args).ok());
  }
  {
    AliasOf out(self, {2, 1, 3});
    KernelArgs args{self.evalue(), EValue(), out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&clone_out, "aten::clone.out", args).ok());
  }
  EXPECT_THAT(self.values(), ElementsAre(1, 2, 3, 4, 5, 6));
}

TEST(OpInPlaceTest, InPlaceViewStillChecksTheDtype) {
  TestTensor self(kF32, {2, 3});
  TensorImpl& impl = self.impl();
  SizesType sizes[] = {6};
  DimOrderType order[] = {0};
  StridesType strides[] = {1};
  TensorImpl as_int(ScalarType::kInt, 1, sizes, impl.mutable_data(), order, strides,
                    TensorShapeDynamism::kStatic);
  KernelArgs args{self.evalue(), EValue(Tensor(&as_int)), EValue()};
  Status s = run_kernel(&alias_copy_out, "aten::alias_copy.out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "'out'"));
}

// A Tensor?[] argument.
struct OptionalTensors {
  explicit OptionalTensors(std::vector<TestTensor*> tensors) {
    for (TestTensor* t : tensors) items.push_back(t != nullptr ? t->evalue() : EValue());
    for (EValue& e : items) pointers.push_back(&e);
    scratch.resize(items.size());
  }
  EValue evalue() {
    return EValue(BoxedList<Tensor>(pointers.data(), scratch.data(), items.size()), true);
  }
  std::vector<EValue> items;
  std::vector<EValue*> pointers;
  std::vector<Tensor> scratch;
};

TEST(OpInPlaceTest, IndexPutUpdatesTheBufferItself) {
  // A [1, 2, 4, 1] cache; rows 1 and 2 of dim 2 get new values, as the
  // plain KV-cache update index_put(cache, [None, None, pos], values).
  TestTensor cache(kF32, {1, 2, 4, 1}, {1, 2, 3, 4, 5, 6, 7, 8});
  TestTensor pos(ScalarType::kLong, {2}, {1, 2});
  TestTensor values(kF32, {1, 2, 2, 1}, {-1, -2, -3, -4});
  OptionalTensors indices({nullptr, nullptr, &pos});
  for (bool accumulate : {false, true}) {
    AliasOf out(cache, {1, 2, 4, 1}, {}, TensorShapeDynamism::kStatic);
    KernelArgs args{cache.evalue(), indices.evalue(), values.evalue(), EValue(accumulate),
                    out.evalue(), EValue()};
    ASSERT_TRUE(run_kernel(&index_put_out, "aten::index_put.out", args).ok());
  }
  // Written (-1, -2 / -3, -4), then accumulated (-2, -4 / -6, -8).
  EXPECT_THAT(cache.values(), ElementsAre(1, -2, -4, 4, 5, -6, -8, 8));
}

TEST(OpInPlaceTest, SliceAndSelectScatterIntoSelf) {
  TestTensor self(kF32, {4, 2}, {0, 1, 2, 3, 4, 5, 6, 7});
  TestTensor src(kF32, {2, 2}, {-1, -2, -3, -4});
  AliasOf out(self, {4, 2}, {}, TensorShapeDynamism::kStatic);
  KernelArgs args{self.evalue(), src.evalue(), EValue(int64_t{0}), EValue(int64_t{1}),
                  EValue(int64_t{3}), EValue(int64_t{1}), out.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&slice_scatter_out, "aten::slice_scatter.out", args).ok());
  EXPECT_THAT(self.values(), ElementsAre(0, 1, -1, -2, -3, -4, 6, 7));

  TestTensor row(kF32, {2}, {9, 9});
  AliasOf out2(self, {4, 2}, {}, TensorShapeDynamism::kStatic);
  KernelArgs select{self.evalue(), row.evalue(), EValue(int64_t{0}), EValue(int64_t{-1}),
                    out2.evalue(), EValue()};
  ASSERT_TRUE(run_kernel(&select_scatter_out, "aten::select_scatter.out", select).ok());
  EXPECT_THAT(self.values(), ElementsAre(0, 1, -1, -2, -3, -4, 9, 9));
}

}  // namespace
}  // namespace torchlight::portable
