// The prepared copies of the data-movement family (dense_copy.h): for each
// kernel whose prepare installs one, the installed eval leaves out exactly
// as the reference eval does (bytes, sizes), on dense and strided layouts,
// on a dynamic shape and on an out planned in self's memory; what the
// program fixes (out's dtype, memory format, dim order, dims) is rejected at
// prepare (load) with the argument named and the reference's message.
#include "kernels/portable/util/dense_copy.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"

namespace torchlight::portable {
namespace {

using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::Prepared;
using kernel_test::Layout;
using kernel_test::TestTensor;
using ::testing::HasSubstr;

std::vector<double> counting(size_t n) {
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = static_cast<double>(i) - 3.5 * static_cast<double>(i % 3);
  return v;
}

bool same_bytes(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  return x.nbytes() == y.nbytes() &&
         std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

// One call of `name` on a self of `dtype`, `sizes` and `layout`, into an
// out of `out_sizes` laid out as `out_layout`; `middle` gives the arguments
// between self and out. Runs what prepare installs and the reference on
// fresh outs and compares. Returns whether prepare replaced the eval.
bool expect_same_as_reference(const char* name, ScalarType dtype, std::vector<SizesType> sizes,
                              const Layout& layout, std::vector<SizesType> out_sizes,
                              const Layout& out_layout,
                              const std::function<std::vector<EValue>()>& middle) {
  const Kernel& kernel = portable_kernel_named(name);
  EXPECT_NE(kernel.prepare, nullptr) << name;
  if (kernel.prepare == nullptr) return false;
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  TestTensor self(dtype, sizes, counting(static_cast<size_t>(n)), layout);
  TestTensor fast_out(dtype, out_sizes, {}, out_layout);
  TestTensor reference_out(dtype, out_sizes, {}, out_layout);
  auto build = [&](TestTensor& out) {
    std::vector<EValue> list{self.evalue()};
    for (const EValue& v : middle()) list.push_back(v);
    list.push_back(out.evalue());
    list.push_back(EValue());
    return std::make_unique<KernelArgs>(std::move(list));
  };
  std::unique_ptr<KernelArgs> fast_args = build(fast_out);
  std::unique_ptr<KernelArgs> reference_args = build(reference_out);
  const Prepared p = prepare_like_loader(kernel, *fast_args);
  EXPECT_TRUE(p.status.ok()) << p.status.message();
  KernelContext fast_ctx(nullptr, nullptr, name);
  KernelContext reference_ctx(nullptr, nullptr, name);
  p.eval(fast_ctx, fast_args->span());
  kernel.eval(reference_ctx, reference_args->span());
  EXPECT_FALSE(reference_ctx.failed()) << reference_ctx.status().message();
  EXPECT_FALSE(fast_ctx.failed()) << fast_ctx.status().message();
  EXPECT_EQ(fast_out.sizes(), reference_out.sizes());
  EXPECT_EQ(fast_out.values(), reference_out.values());
  EXPECT_TRUE(same_bytes(fast_out, reference_out));
  return p.eval != kernel.eval;
}

const Layout kDense{};
const Layout kChannelsLast = kernel_test::dim_order({0, 2, 3, 1});

TEST(DenseCopyTest, SameShapeCopiesMatchTheReference) {
  struct Case {
    const char* name;
    std::function<std::vector<EValue>()> middle;
  };
  const Case cases[] = {
      {"aten::clone.out", [] { return std::vector<EValue>{EValue()}; }},
      {"aten::clone.out", [] { return std::vector<EValue>{EValue(int64_t{0})}; }},
      {"aten::_to_copy.out", [] { return std::vector<EValue>{EValue(false), EValue()}; }},
      {"dim_order_ops::_to_dim_order_copy.out",
       [] { return std::vector<EValue>{EValue(false), EValue()}; }},
      {"aten::alias_copy.out", [] { return std::vector<EValue>{}; }},
      {"aten::detach_copy.out", [] { return std::vector<EValue>{}; }},
      {"aten::lift_fresh_copy.out", [] { return std::vector<EValue>{}; }},
  };
  for (const Case& c : cases) {
    for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kLong, ScalarType::kBool,
                             ScalarType::kHalf, ScalarType::kChar}) {
      SCOPED_TRACE(std::string(c.name) + " " + to_string(dtype));
      EXPECT_TRUE(expect_same_as_reference(c.name, dtype, {2, 3, 4, 5}, kDense, {2, 3, 4, 5},
                                           kDense, c.middle));
      // Strided on either side: the strided copy, same bytes.
      expect_same_as_reference(c.name, dtype, {2, 3, 4, 5}, kChannelsLast, {2, 3, 4, 5}, kDense,
                               c.middle);
      expect_same_as_reference(c.name, dtype, {1, 3, 2, 2}, kDense, {1, 3, 2, 2}, kChannelsLast,
                               c.middle);
      expect_same_as_reference(c.name, dtype, {}, kDense, {}, kDense, c.middle);
      expect_same_as_reference(c.name, dtype, {0, 3}, kDense, {0, 3}, kDense, c.middle);
    }
  }
}

TEST(DenseCopyTest, ReshapesAndViewsMatchTheReference) {
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kInt, ScalarType::kBool}) {
    SCOPED_TRACE(to_string(dtype));
    IntListArg size({4, -1});
    auto size_arg = [&] { return std::vector<EValue>{size.evalue()}; };
    EXPECT_TRUE(expect_same_as_reference("aten::view_copy.out", dtype, {2, 6}, kDense, {4, 3},
                                         kDense, size_arg));
    EXPECT_TRUE(expect_same_as_reference("aten::_unsafe_view.out", dtype, {2, 6}, kDense, {4, 3},
                                         kDense, size_arg));
    expect_same_as_reference("aten::view_copy.out", dtype, {2, 2, 3},
                             kernel_test::dim_order({2, 0, 1}), {4, 3}, kDense, size_arg);
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      EXPECT_TRUE(expect_same_as_reference("aten::unsqueeze_copy.out", dtype, {2, 6}, kDense,
                                           {12, 1, 1}, kernel_test::dynamic_bound(),
                                           [&] { return std::vector<EValue>{EValue(dim)}; }));
    }
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{0, 1, 2}, {2, 0, 1}, {-1, 1, 0}}) {
      IntListArg order(dims);
      EXPECT_TRUE(expect_same_as_reference("aten::permute_copy.out", dtype, {2, 3, 4}, kDense,
                                           {4, 3, 2}, kernel_test::dynamic_bound(),
                                           [&] { return std::vector<EValue>{order.evalue()}; }));
    }
    for (int64_t a : {0, 1, -1}) {
      EXPECT_TRUE(expect_same_as_reference(
          "aten::transpose_copy.int_out", dtype, {2, 3, 4}, kDense, {4, 3, 2},
          kernel_test::dynamic_bound(),
          [&] { return std::vector<EValue>{EValue(a), EValue(int64_t{0})}; }));
    }
  }
}

TEST(DenseCopyTest, DynamicShapeResizesOutOnThePreparedPath) {
  TestTensor self(ScalarType::kFloat, {4}, {1, 2, 3, 4}, kernel_test::dynamic_bound());
  TestTensor out(ScalarType::kFloat, {4}, {}, kernel_test::dynamic_bound());
  KernelArgs args{self.evalue(), EValue(), out.evalue(), EValue()};
  ASSERT_TRUE(kernel_test::run_kernel(&clone_out, "aten::clone.out", args).ok());
  const SizesType two[] = {2};
  ASSERT_TRUE(self.impl().resize({two, 1}).ok());
  ASSERT_TRUE(kernel_test::run_kernel(&clone_out, "aten::clone.out", args).ok());
  EXPECT_EQ(out.sizes(), std::vector<SizesType>({2}));
  EXPECT_EQ(out.values(), std::vector<double>({1, 2}));
}

TEST(DenseCopyTest, OutInSelfsMemoryIsLeftInPlace) {
  // The exporter plans a clone or a reshape of an intermediate in place:
  // nothing moves (ASan checks no memcpy runs between identical pointers).
  TestTensor self(ScalarType::kFloat, {2, 3}, counting(6));
  KernelArgs clone{self.evalue(), EValue(), self.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::clone.out"), clone);
  ASSERT_TRUE(p.status.ok());
  KernelContext ctx(nullptr, nullptr, "aten::clone.out");
  p.eval(ctx, clone.span());
  EXPECT_FALSE(ctx.failed()) << ctx.status().message();
  EXPECT_EQ(self.values(), counting(6));
}

TEST(DenseCopyTest, WhatTheProgramFixesIsRejectedAtPrepareNamingTheArgument) {
  TestTensor f(ScalarType::kFloat, {2, 3}, counting(6));
  TestTensor i_out(ScalarType::kInt, {2, 3});
  TestTensor f_out(ScalarType::kFloat, {2, 3});
  TestTensor f_out_t(ScalarType::kFloat, {3, 2});
  auto rejected = [](const char* name, KernelArgs& args, Error code, const char* reason) {
    SCOPED_TRACE(name);
    const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
    EXPECT_EQ(p.status.code(), code) << p.status.message();
    EXPECT_THAT(p.status.message(), HasSubstr(reason));
    // The reference refuses the same call with the same reason.
    KernelContext ctx(nullptr, nullptr, name);
    portable_kernel_named(name).eval(ctx, args.span());
    EXPECT_TRUE(ctx.failed());
    EXPECT_THAT(ctx.status().message(), HasSubstr(reason));
  };
  KernelArgs clone{f.evalue(), EValue(), i_out.evalue(), EValue()};
  rejected("aten::clone.out", clone, Error::kInvalidType, "argument 'out' has dtype int32");
  KernelArgs clone_format{f.evalue(), EValue(int64_t{2}), f_out.evalue(), EValue()};
  rejected("aten::clone.out", clone_format, Error::kInvalidArgument,
           "'memory_format' is channels_last, which needs a 4-D tensor");
  IntListArg order({1, 0});
  KernelArgs dim_order{f.evalue(), EValue(false), order.evalue(), f_out.evalue(), EValue()};
  rejected("dim_order_ops::_to_dim_order_copy.out", dim_order, Error::kInvalidArgument,
           "argument 'dim_order' asks for dimension 1 at position 0");
  IntListArg repeated({0, 0});
  KernelArgs permute{f.evalue(), repeated.evalue(), f_out.evalue(), EValue()};
  rejected("aten::permute_copy.out", permute, Error::kInvalidArgument,
           "argument 'dims' repeats dimension 0");
  KernelArgs unsqueeze{f.evalue(), EValue(int64_t{3}), f_out.evalue(), EValue()};
  rejected("aten::unsqueeze_copy.out", unsqueeze, Error::kInvalidArgument, "argument 'dim' is 3");
  KernelArgs transpose{f.evalue(), EValue(int64_t{0}), EValue(int64_t{2}), f_out_t.evalue(),
                       EValue()};
  rejected("aten::transpose_copy.int_out", transpose, Error::kInvalidArgument,
           "argument 'dim1' is 2");
  IntListArg size({3, 2});
  KernelArgs view{f.evalue(), size.evalue(), i_out.evalue(), EValue()};
  rejected("aten::view_copy.out", view, Error::kInvalidType, "argument 'out' has dtype int32");
}

}  // namespace
}  // namespace torchlight::portable
