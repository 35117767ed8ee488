// split_copy, split_with_sizes_copy and unbind_copy in both argument layouts:
// ours (the schema's arguments; the schema returns nothing) and upstream's
// (a second TensorList naming the out tensors appended as the return).
// Values against torch are covered by the conformance cases; here the layouts.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using ::torchlight::testing::ErrorIs;

using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::run_kernel;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

// A Tensor[] value over tensors: boxed pointers to their EValues, as the
// executor builds lists. Two lists over the same `items` name the same tensors.
class TensorListArg {
 public:
  explicit TensorListArg(const std::vector<TestTensor*>& tensors) {
    for (TestTensor* t : tensors) items_.push_back(t->evalue());
    for (EValue& e : items_) pointers_.push_back(&e);
    scratch_.resize(items_.size());
  }
  TensorListArg(const TensorListArg&) = delete;
  TensorListArg& operator=(const TensorListArg&) = delete;

  EValue evalue() {
    return EValue(BoxedList<Tensor>(pointers_.data(), scratch_.data(), items_.size()), false);
  }
  // A second list over the same item values (upstream's return list).
  EValue second_view() {
    second_scratch_.resize(items_.size());
    return EValue(BoxedList<Tensor>(pointers_.data(), second_scratch_.data(), items_.size()),
                  false);
  }

 private:
  std::vector<EValue> items_;
  std::vector<EValue*> pointers_;
  std::vector<Tensor> scratch_;
  std::vector<Tensor> second_scratch_;
};

// self = 0..11 as float [2, 6]; pieces of 4 along dim 1 give [2,4] and [2,2].
struct SplitFixture {
  TestTensor self{ScalarType::kFloat, {2, 6}, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11}};
  TestTensor a{ScalarType::kFloat, {2, 4}};
  TestTensor b{ScalarType::kFloat, {2, 2}};
  TensorListArg outs{{&a, &b}};

  void expect_split() const {
    EXPECT_EQ(a.values(), (std::vector<double>{0, 1, 2, 3, 6, 7, 8, 9}));
    EXPECT_EQ(b.values(), (std::vector<double>{4, 5, 10, 11}));
  }
};

TEST(SplitCopyLayoutTest, OurLayoutWithoutReturn) {
  SplitFixture f;
  KernelArgs args{f.self.evalue(), EValue(int64_t{4}), EValue(int64_t{1}), f.outs.evalue()};
  ASSERT_TRUE(run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args).ok());
  f.expect_split();
}

TEST(SplitCopyLayoutTest, UpstreamLayoutAppendsReturnList) {
  SplitFixture f;
  KernelArgs args{f.self.evalue(), EValue(int64_t{4}), EValue(int64_t{1}), f.outs.evalue(),
                  f.outs.second_view()};
  Status s = run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args);
  ASSERT_TRUE(s.ok()) << s.message();
  f.expect_split();
}

TEST(SplitCopyLayoutTest, SplitWithSizesUpstreamLayout) {
  SplitFixture f;
  IntListArg sizes({4, 2});
  KernelArgs args{f.self.evalue(), sizes.evalue(), EValue(int64_t{-1}), f.outs.evalue(),
                  f.outs.second_view()};
  Status s = run_kernel(split_with_sizes_copy_out, "aten::split_with_sizes_copy.out", args);
  ASSERT_TRUE(s.ok()) << s.message();
  f.expect_split();
}

TEST(SplitCopyLayoutTest, UnbindUpstreamLayout) {
  TestTensor self(ScalarType::kInt, {2, 3}, {1, 2, 3, 4, 5, 6});
  TestTensor r0(ScalarType::kInt, {3});
  TestTensor r1(ScalarType::kInt, {3});
  TensorListArg outs({&r0, &r1});
  KernelArgs args{self.evalue(), EValue(int64_t{0}), outs.evalue(), outs.second_view()};
  Status s = run_kernel(unbind_copy_int_out, "aten::unbind_copy.int_out", args);
  ASSERT_TRUE(s.ok()) << s.message();
  EXPECT_EQ(r0.values(), (std::vector<double>{1, 2, 3}));
  EXPECT_EQ(r1.values(), (std::vector<double>{4, 5, 6}));
}

TEST(SplitCopyLayoutTest, ReturnListMustNameTheOutTensors) {
  SplitFixture f;
  TestTensor other{ScalarType::kFloat, {2, 2}};
  TensorListArg wrong{{&f.a, &other}};
  KernelArgs args{f.self.evalue(), EValue(int64_t{4}), EValue(int64_t{1}), f.outs.evalue(),
                  wrong.evalue()};
  Status s = run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument, "position 1"));

  TensorListArg shorter{{&f.a}};
  args[4] = shorter.evalue();
  s = run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args);
  EXPECT_THAT(s.message(), HasSubstr("has 1 tensors, 'out' has 2"));

  args[4] = EValue(int64_t{3});
  s = run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidType, "must be a Tensor[], got Int"));
}

TEST(SplitCopyLayoutTest, WrongCountNamesBothLayouts) {
  SplitFixture f;
  KernelArgs args{f.self.evalue(), EValue(int64_t{4}), f.outs.evalue()};
  Status s = run_kernel(split_copy_tensor_out, "aten::split_copy.Tensor_out", args);
  EXPECT_THAT(s, ErrorIs(Error::kInvalidArgument,
                         "expected 4 arguments (self, split_size, dim, out), or 5"));
  EXPECT_THAT(s.message(), HasSubstr("got 3"));
}

// Their prepare steps check at load what the program fixes (self's rank,
// `dim`, the outs' dtypes), naming the argument; the pieces' sizes, which a
// dynamic dim may change, are checked on each run (the tests above).
TEST(SplitCopyLayoutTest, LoadRejectsWhatTheProgramFixes) {
  SplitFixture f;
  TestTensor scalar(ScalarType::kFloat, {});
  TestTensor ints(ScalarType::kInt, {2, 2});
  TensorListArg mixed({&f.a, &ints});
  IntListArg sizes({4, 2});
  auto prepare = [](const char* name, KernelArgs& args) {
    return kernel_test::prepare_like_loader(kernel_test::portable_kernel_named(name), args).status;
  };
  KernelArgs zero_d{scalar.evalue(), EValue(int64_t{1}), EValue(int64_t{0}), f.outs.evalue()};
  EXPECT_THAT(prepare("aten::split_copy.Tensor_out", zero_d),
              ErrorIs(Error::kInvalidArgument, "argument 'self' is 0-d; split needs"));
  KernelArgs far{f.self.evalue(), sizes.evalue(), EValue(int64_t{2}), f.outs.evalue()};
  EXPECT_THAT(prepare("aten::split_with_sizes_copy.out", far),
              ErrorIs(Error::kInvalidArgument, "argument 'dim' is 2, out of range"));
  KernelArgs wrong{f.self.evalue(), EValue(int64_t{1}), mixed.evalue()};
  EXPECT_THAT(prepare("aten::unbind_copy.int_out", wrong),
              ErrorIs(Error::kInvalidType,
                      "argument 'out' has dtype int32 at position 1, expected float32"));
  KernelArgs fine{f.self.evalue(), EValue(int64_t{4}), EValue(int64_t{1}), f.outs.evalue()};
  EXPECT_TRUE(prepare("aten::split_copy.Tensor_out", fine).ok());
}

}  // namespace
}  // namespace torchlight::portable
