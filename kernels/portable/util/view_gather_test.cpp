// The prepared paths of the shape family (view_gather.h: permute_copy,
// transpose_copy, slice_copy, select_copy, expand_copy; squeeze_copy's
// reshapes; cat and stack's memcpy blocks) and of dtype-changing copies
// (dense_convert.h): for each, the installed eval leaves out exactly as the
// reference eval does (bytes and sizes) over dtypes, 0-d, empty, strided
// and dynamic shapes; what the program fixes is rejected at prepare (load)
// naming the argument, with the reference's reason; what only a run can
// show (an index a dynamic dim put out of range) still fails with the
// reference's message.
#include "kernels/portable/util/view_gather.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::Layout;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using ::testing::HasSubstr;
using ::torchlight::testing::ErrorIs;

constexpr ScalarType kAllDtypes[] = {
    ScalarType::kByte,  ScalarType::kChar,  ScalarType::kShort,  ScalarType::kInt,
    ScalarType::kLong,  ScalarType::kHalf,  ScalarType::kFloat,  ScalarType::kDouble,
    ScalarType::kBool,  ScalarType::kBFloat16};

const Layout kDense{};
const Layout kChannelsLast = kernel_test::dim_order({0, 2, 3, 1});

// Values every dtype holds differently: negatives, fractions, beyond int8,
// beyond int32, zeros (bool) and NaN-free.
std::vector<double> mixed(size_t n) {
  static const double kValues[] = {0, 1, -1.5, 2.75, 300.25, -129, 65504, 1e10, -7, 0.5, 255, 3};
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kValues[i % 12] + static_cast<double>(i / 12);
  return v;
}

int64_t count(const std::vector<SizesType>& sizes) {
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  return n;
}

bool same_bytes(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  if (x.nbytes() != y.nbytes()) return false;
  return x.nbytes() == 0 || std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

using MakeArgs = std::function<std::vector<EValue>(EValue out)>;

// One call of `name` whose arguments make(out) lists, run through what
// prepare installs and through the reference, each into a fresh out of
// `out_dtype` and `out_sizes` laid out as `out_layout`; compares the outs'
// sizes and bytes. Returns whether prepare installed another eval.
bool expect_same_as_reference(const char* name, ScalarType out_dtype,
                              std::vector<SizesType> out_sizes, const Layout& out_layout,
                              const MakeArgs& make) {
  const Kernel& kernel = portable_kernel_named(name);
  EXPECT_NE(kernel.prepare, nullptr) << name;
  if (kernel.prepare == nullptr) return false;
  TestTensor fast_out(out_dtype, out_sizes, {}, out_layout);
  TestTensor reference_out(out_dtype, out_sizes, {}, out_layout);
  auto build = [&](TestTensor& out) {
    std::vector<EValue> list = make(out.evalue());
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
  EXPECT_TRUE(same_bytes(fast_out, reference_out));
  return p.eval != kernel.eval;
}

// A self of `dtype`, `sizes`, `layout` with mixed() values, and the
// middle arguments; out last.
struct OneInput {
  OneInput(ScalarType dtype, std::vector<SizesType> sizes, const Layout& layout = kDense)
      : self(dtype, sizes, mixed(static_cast<size_t>(count(sizes))), layout) {}
  MakeArgs with(std::function<std::vector<EValue>()> middle) {
    return [this, middle](EValue out) {
      std::vector<EValue> list{self.evalue()};
      for (const EValue& v : middle()) list.push_back(v);
      list.push_back(out);
      return list;
    };
  }
  TestTensor self;
};

std::function<std::vector<EValue>()> ints(std::vector<EValue> values) {
  return [values] { return values; };
}

TEST(DenseViewTest, PermuteAndTransposeMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (const std::vector<int64_t>& dims :
         std::vector<std::vector<int64_t>>{{0, 1, 2}, {2, 0, 1}, {-1, 1, 0}, {1, 2, 0}}) {
      OneInput in(dtype, {2, 3, 4});
      IntListArg order(dims);
      const std::vector<SizesType> sizes{2, 3, 4};
      std::vector<SizesType> out_sizes;
      for (int64_t d : dims) out_sizes.push_back(sizes[(d + 3) % 3]);
      EXPECT_TRUE(expect_same_as_reference("aten::permute_copy.out", dtype, out_sizes, kDense,
                                           in.with([&] { return std::vector<EValue>{order.evalue()}; })));
    }
    // 4-D channels-last self, 0-d, and an empty tensor.
    OneInput strided(dtype, {2, 3, 4, 5}, kChannelsLast);
    IntListArg nchw_to_nhwc({0, 2, 3, 1});
    EXPECT_TRUE(expect_same_as_reference(
        "aten::permute_copy.out", dtype, {2, 4, 5, 3}, kDense,
        strided.with([&] { return std::vector<EValue>{nchw_to_nhwc.evalue()}; })));
    OneInput scalar(dtype, {});
    IntListArg none({});
    EXPECT_TRUE(expect_same_as_reference("aten::permute_copy.out", dtype, {}, kDense,
                                         scalar.with([&] { return std::vector<EValue>{none.evalue()}; })));
    OneInput empty(dtype, {0, 3});
    IntListArg swap({1, 0});
    EXPECT_TRUE(expect_same_as_reference("aten::permute_copy.out", dtype, {3, 0}, kDense,
                                         empty.with([&] { return std::vector<EValue>{swap.evalue()}; })));
    // An out in another dim order keeps the strided copy, same bytes.
    expect_same_as_reference("aten::permute_copy.out", dtype, {2, 4, 5, 3}, kChannelsLast,
                             strided.with([&] { return std::vector<EValue>{nchw_to_nhwc.evalue()}; }));
    for (int64_t a : {0, 1, -1}) {
      OneInput in(dtype, {2, 3, 4});
      std::vector<SizesType> out_sizes{2, 3, 4};
      std::swap(out_sizes[0], out_sizes[(a + 3) % 3]);
      EXPECT_TRUE(expect_same_as_reference("aten::transpose_copy.int_out", dtype, out_sizes,
                                           kDense, in.with(ints({EValue(a), EValue(int64_t{0})}))));
    }
    EXPECT_TRUE(expect_same_as_reference("aten::transpose_copy.int_out", dtype, {}, kDense,
                                         scalar.with(ints({EValue(int64_t{0}), EValue(int64_t{-1})}))));
  }
}

TEST(DenseViewTest, SliceAndSelectMatchTheReference) {
  struct Slice {
    int64_t dim;
    EValue start;
    EValue end;
    int64_t step;
  };
  const Slice slices[] = {
      {0, EValue(int64_t{1}), EValue(int64_t{3}), 1},  {1, EValue(), EValue(), 2},
      {-1, EValue(int64_t{-3}), EValue(), 1},          {2, EValue(int64_t{1}), EValue(int64_t{100}), 3},
      {1, EValue(int64_t{2}), EValue(int64_t{1}), 1},  {0, EValue(int64_t{-100}), EValue(int64_t{-1}), 2},
      {3, EValue(int64_t{0}), EValue(int64_t{5}), 4},
      {2, EValue(int64_t{1}), EValue(), INT64_MAX},  // One element: the step is never applied.
  };
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (const Slice& s : slices) {
      SCOPED_TRACE(s.dim);
      for (const Layout* layout : {&kDense, &kChannelsLast}) {
        OneInput in(dtype, {4, 3, 5, 6}, *layout);
        // The reference decides out's size; the fast path resizes a
        // dynamic out the same way.
        EXPECT_TRUE(expect_same_as_reference(
            "aten::slice_copy.Tensor_out", dtype, {4, 3, 5, 6}, kernel_test::dynamic_bound(),
            in.with(ints({EValue(s.dim), s.start, s.end, EValue(s.step)}))));
      }
    }
    for (int64_t dim : {0, 1, 2, -1}) {
      for (int64_t index : {0, 2, -1}) {
        OneInput in(dtype, {3, 4, 5});
        std::vector<SizesType> out_sizes{3, 4, 5};
        out_sizes.erase(out_sizes.begin() + (dim + 3) % 3);
        EXPECT_TRUE(expect_same_as_reference("aten::select_copy.int_out", dtype, out_sizes,
                                             kDense, in.with(ints({EValue(dim), EValue(index)}))));
      }
    }
    OneInput row(dtype, {5});
    EXPECT_TRUE(expect_same_as_reference("aten::select_copy.int_out", dtype, {}, kDense,
                                         row.with(ints({EValue(int64_t{0}), EValue(int64_t{-2})}))));
    OneInput empty(dtype, {0, 4});
    EXPECT_TRUE(expect_same_as_reference("aten::select_copy.int_out", dtype, {0}, kDense,
                                         empty.with(ints({EValue(int64_t{1}), EValue(int64_t{3})}))));
  }
}

TEST(DenseViewTest, ExpandAndSqueezeMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    struct Expand {
      std::vector<SizesType> self;
      std::vector<int64_t> size;
      std::vector<SizesType> out;
    };
    const Expand expands[] = {
        {{3, 1}, {2, 3, 4}, {2, 3, 4}},   {{3, 1}, {-1, 5}, {3, 5}},  {{}, {2, 3}, {2, 3}},
        {{1, 4}, {0, 4}, {0, 4}},         {{2, 1, 3}, {2, 2, 3}, {2, 2, 3}},
        {{1}, {2, 1, 1, 7}, {2, 1, 1, 7}},
    };
    for (const Expand& e : expands) {
      OneInput in(dtype, e.self);
      IntListArg size(e.size);
      EXPECT_TRUE(expect_same_as_reference("aten::expand_copy.out", dtype, e.out, kDense,
                                           in.with([&] {
                                             return std::vector<EValue>{size.evalue(), EValue(false)};
                                           })));
    }
    OneInput in(dtype, {1, 3, 1, 2});
    EXPECT_TRUE(expect_same_as_reference("aten::squeeze_copy.out", dtype, {3, 2}, kDense,
                                         in.with(ints({}))));
    for (int64_t dim : {0, 1, 2, -1}) {
      std::vector<SizesType> out{1, 3, 1, 2};
      if (out[(dim + 4) % 4] == 1) out.erase(out.begin() + (dim + 4) % 4);
      EXPECT_TRUE(expect_same_as_reference("aten::squeeze_copy.dim_out", dtype, out, kDense,
                                           in.with(ints({EValue(dim)}))));
    }
    IntListArg dims({0, -2, 1});
    EXPECT_TRUE(expect_same_as_reference("aten::squeeze_copy.dims_out", dtype, {3, 2}, kDense,
                                         in.with([&] { return std::vector<EValue>{dims.evalue()}; })));
    OneInput strided(dtype, {2, 1, 3, 1}, kChannelsLast);
    EXPECT_TRUE(expect_same_as_reference("aten::squeeze_copy.out", dtype, {2, 3}, kDense,
                                         strided.with(ints({}))));
    OneInput scalar(dtype, {});
    EXPECT_TRUE(expect_same_as_reference("aten::squeeze_copy.dim_out", dtype, {}, kDense,
                                         scalar.with(ints({EValue(int64_t{-1})}))));
  }
}

// A Tensor[] argument over test tensors.
struct TensorListArg {
  explicit TensorListArg(std::vector<TestTensor*> tensors) {
    for (TestTensor* t : tensors) items.push_back(t->evalue());
    for (EValue& e : items) pointers.push_back(&e);
    scratch.resize(items.size());
  }
  EValue evalue() {
    return EValue(BoxedList<Tensor>(pointers.data(), scratch.data(), items.size()), false);
  }
  std::vector<EValue> items;
  std::vector<EValue*> pointers;
  std::vector<Tensor> scratch;
};

MakeArgs list_then(TensorListArg* list, int64_t dim) {
  return [list, dim](EValue out) { return std::vector<EValue>{list->evalue(), EValue(dim), out}; };
}

TEST(DenseViewTest, CatAndStackMatchTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (int64_t dim : {0, 1, 2, -1}) {
      const size_t d = static_cast<size_t>((dim + 3) % 3);
      std::vector<SizesType> a_sizes{2, 3, 4};
      std::vector<SizesType> b_sizes{2, 3, 4};
      b_sizes[d] = 1;
      std::vector<SizesType> c_sizes{2, 3, 4};
      c_sizes[d] = 0;
      TestTensor a(dtype, a_sizes, mixed(24));
      TestTensor b(dtype, b_sizes, mixed(static_cast<size_t>(count(b_sizes))));
      TestTensor c(dtype, c_sizes);
      TensorListArg list({&a, &b, &c, &a});
      std::vector<SizesType> out{2, 3, 4};
      out[d] = a_sizes[d] * 2 + 1;
      EXPECT_TRUE(expect_same_as_reference("aten::cat.out", dtype, out, kDense,
                                           list_then(&list, dim)));
    }
    // 1-D: [0] tensors are skipped, with or without others.
    TestTensor v(dtype, {3}, mixed(3));
    TestTensor none(dtype, {0});
    TensorListArg vectors({&none, &v, &none, &v});
    EXPECT_TRUE(
        expect_same_as_reference("aten::cat.out", dtype, {6}, kDense, list_then(&vectors, 0)));
    TensorListArg nothing({&none, &none});
    EXPECT_TRUE(
        expect_same_as_reference("aten::cat.out", dtype, {0}, kDense, list_then(&nothing, -1)));
    for (int64_t dim : {0, 1, 2, -1, -3}) {
      TestTensor a(dtype, {2, 3}, mixed(6));
      TestTensor b(dtype, {2, 3}, mixed(12));
      TensorListArg list({&a, &b, &a});
      std::vector<SizesType> out{2, 3};
      out.insert(out.begin() + (dim + 3) % 3, 3);
      EXPECT_TRUE(expect_same_as_reference("aten::stack.out", dtype, out, kDense,
                                           list_then(&list, dim)));
    }
    TestTensor s(dtype, {}, {5});
    TensorListArg scalars({&s, &s});
    EXPECT_TRUE(
        expect_same_as_reference("aten::stack.out", dtype, {2}, kDense, list_then(&scalars, 0)));
  }
  // Mixed dtypes convert in the reference: the prepared path stays out of it.
  TestTensor f(ScalarType::kFloat, {2}, {1.5, 2});
  TestTensor i(ScalarType::kInt, {2}, {3, 4});
  TensorListArg mixed_list({&f, &i});
  EXPECT_FALSE(expect_same_as_reference("aten::cat.out", ScalarType::kFloat, {4}, kDense,
                                        list_then(&mixed_list, 0)));
  EXPECT_FALSE(expect_same_as_reference("aten::stack.out", ScalarType::kFloat, {2, 2}, kDense,
                                        list_then(&mixed_list, 0)));
}

// Slabs of 1-16 bytes, equal in every tensor, take fixed-size copies
// (upstream's RoPE: two [.., D/2, 1] halves into [.., D/2, 2]); other
// sizes, unequal slabs and long lists the general loop. Same bytes either way.
TEST(DenseViewTest, CatOfSmallEqualSlabsMatchesTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (SizesType last : {1, 2, 3}) {  // 1-3 elements: 1-24 bytes a slab.
      TestTensor a(dtype, {2, 3, 4, last}, mixed(static_cast<size_t>(24 * last)));
      TestTensor b(dtype, {2, 3, 4, last}, mixed(static_cast<size_t>(48 * last)));
      TensorListArg pair({&a, &b});
      EXPECT_TRUE(expect_same_as_reference("aten::cat.out", dtype, {2, 3, 4, 2 * last}, kDense,
                                           list_then(&pair, -1)));
      TensorListArg nine({&a, &b, &a, &b, &a, &b, &a, &b, &a});
      EXPECT_TRUE(expect_same_as_reference("aten::cat.out", dtype, {2, 3, 4, 9 * last}, kDense,
                                           list_then(&nine, 3)));
    }
    TestTensor v(dtype, {5}, mixed(5));
    TensorListArg stacked({&v, &v, &v});
    EXPECT_TRUE(
        expect_same_as_reference("aten::stack.out", dtype, {5, 3}, kDense, list_then(&stacked, 1)));
  }
}

TEST(DenseConvertTest, EveryDtypePairMatchesTheReference) {
  for (const char* name : {"aten::_to_copy.out", "dim_order_ops::_to_dim_order_copy.out"}) {
    for (ScalarType from : kAllDtypes) {
      for (ScalarType to : kAllDtypes) {
        SCOPED_TRACE(std::string(name) + " " + to_string(from) + " -> " + to_string(to));
        for (const std::vector<SizesType>& sizes :
             std::vector<std::vector<SizesType>>{{3, 8}, {}, {0, 2}}) {
          OneInput in(from, sizes);
          EXPECT_TRUE(expect_same_as_reference(name, to, sizes, kDense,
                                               in.with(ints({EValue(false), EValue()}))));
        }
        // A strided self keeps the reference's strided conversion.
        OneInput strided(from, {1, 3, 2, 2}, kChannelsLast);
        EXPECT_EQ(expect_same_as_reference(name, to, {1, 3, 2, 2}, kDense,
                                           strided.with(ints({EValue(false), EValue()}))),
                  from == to);
      }
    }
  }
}

TEST(DenseViewTest, DynamicShapesRunThePreparedPathAtEachSize) {
  // Prepared once at the upper bound, then run at smaller sizes.
  std::vector<double> other_values = mixed(48);
  other_values.erase(other_values.begin(), other_values.begin() + 24);
  TestTensor self(ScalarType::kFloat, {4, 6}, mixed(24), kernel_test::dynamic_bound());
  TestTensor other(ScalarType::kFloat, {4, 6}, other_values, kernel_test::dynamic_bound());
  IntListArg swap({1, 0});
  TensorListArg pair({&self, &other});
  struct Call {
    const char* name;
    std::vector<SizesType> out_sizes;  // At the upper bound.
    std::function<std::vector<EValue>()> middle;  // Null: cat of `pair`.
  };
  const Call calls[] = {
      {"aten::permute_copy.out", {6, 4}, [&] { return std::vector<EValue>{swap.evalue()}; }},
      {"aten::slice_copy.Tensor_out", {4, 2},
       [] {
         return std::vector<EValue>{EValue(int64_t{1}), EValue(int64_t{1}), EValue(int64_t{5}),
                                    EValue(int64_t{2})};
       }},
      {"aten::select_copy.int_out", {6},
       [] { return std::vector<EValue>{EValue(int64_t{0}), EValue(int64_t{-1})}; }},
      {"aten::cat.out", {8, 6}, nullptr},
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.name);
    const SizesType full[] = {4, 6};
    ASSERT_TRUE(self.impl().resize({full, 2}).ok());
    ASSERT_TRUE(other.impl().resize({full, 2}).ok());
    TestTensor fast(ScalarType::kFloat, c.out_sizes, {}, kernel_test::dynamic_bound());
    TestTensor reference(ScalarType::kFloat, c.out_sizes, {}, kernel_test::dynamic_bound());
    auto make = [&](TestTensor& out) {
      std::vector<EValue> list;
      if (c.middle == nullptr) {
        list = {pair.evalue(), EValue(int64_t{0}), out.evalue(), EValue()};
      } else {
        list = {self.evalue()};
        for (const EValue& v : c.middle()) list.push_back(v);
        list.push_back(out.evalue());
        list.push_back(EValue());
      }
      return std::make_unique<KernelArgs>(std::move(list));
    };
    std::unique_ptr<KernelArgs> fast_args = make(fast);
    std::unique_ptr<KernelArgs> reference_args = make(reference);
    const Kernel& kernel = portable_kernel_named(c.name);
    const Prepared p = prepare_like_loader(kernel, *fast_args);
    ASSERT_TRUE(p.status.ok()) << p.status.message();
    EXPECT_NE(p.eval, kernel.eval);
    for (SizesType rows : {4, 3, 1, 0, 2}) {
      SCOPED_TRACE(rows);
      const SizesType now[] = {rows, 6};
      ASSERT_TRUE(self.impl().resize({now, 2}).ok());
      ASSERT_TRUE(other.impl().resize({now, 2}).ok());
      KernelContext fast_ctx(nullptr, nullptr, c.name);
      KernelContext reference_ctx(nullptr, nullptr, c.name);
      p.eval(fast_ctx, fast_args->span());
      kernel.eval(reference_ctx, reference_args->span());
      // select at -1 of 0 rows fails: both the same way.
      EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed());
      EXPECT_EQ(std::string(fast_ctx.status().message()),
                std::string(reference_ctx.status().message()));
      if (reference_ctx.failed()) continue;
      EXPECT_EQ(fast.sizes(), reference.sizes());
      EXPECT_TRUE(same_bytes(fast, reference));
    }
  }
}

TEST(DenseViewTest, WhatTheProgramFixesIsRejectedAtPrepareNamingTheArgument) {
  TestTensor f(ScalarType::kFloat, {2, 3}, mixed(6));
  TestTensor scalar(ScalarType::kFloat, {}, {1});
  TestTensor f_out(ScalarType::kFloat, {2, 3});
  TestTensor i_out(ScalarType::kInt, {2, 3});
  auto rejected = [](const char* name, KernelArgs& args, Error code, const char* reason) {
    SCOPED_TRACE(name);
    const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
    EXPECT_THAT(p.status, ErrorIs(code, reason));
    // The reference refuses the same call with the same reason.
    KernelContext ctx(nullptr, nullptr, name);
    portable_kernel_named(name).eval(ctx, args.span());
    EXPECT_THAT(ctx.status(), ErrorIs(code, reason));
  };
  KernelArgs slice_scalar{scalar.evalue(), EValue(int64_t{0}), EValue(), EValue(),
                          EValue(int64_t{1}), f_out.evalue(), EValue()};
  rejected("aten::slice_copy.Tensor_out", slice_scalar, Error::kInvalidArgument,
           "argument 'self' is 0-d");
  KernelArgs slice_dim{f.evalue(), EValue(int64_t{2}), EValue(), EValue(), EValue(int64_t{1}),
                       f_out.evalue(), EValue()};
  rejected("aten::slice_copy.Tensor_out", slice_dim, Error::kInvalidArgument,
           "argument 'dim' is 2, out of range");
  KernelArgs slice_out{f.evalue(), EValue(int64_t{0}), EValue(), EValue(), EValue(int64_t{1}),
                       i_out.evalue(), EValue()};
  rejected("aten::slice_copy.Tensor_out", slice_out, Error::kInvalidType,
           "argument 'out' has dtype int32");
  KernelArgs select_dim{f.evalue(), EValue(int64_t{-3}), EValue(int64_t{0}), f_out.evalue(),
                        EValue()};
  rejected("aten::select_copy.int_out", select_dim, Error::kInvalidArgument,
           "argument 'dim' is -3");
  KernelArgs select_scalar{scalar.evalue(), EValue(int64_t{0}), EValue(int64_t{0}),
                           f_out.evalue(), EValue()};
  rejected("aten::select_copy.int_out", select_scalar, Error::kInvalidArgument,
           "argument 'self' is 0-d");
  IntListArg short_size({3});
  KernelArgs expand{f.evalue(), short_size.evalue(), EValue(false), f_out.evalue(), EValue()};
  rejected("aten::expand_copy.out", expand, Error::kInvalidArgument,
           "argument 'size' has 1 entries; expected at least 2");
  IntListArg same_size({2, 3});
  KernelArgs expand_out{f.evalue(), same_size.evalue(), EValue(false), i_out.evalue(), EValue()};
  rejected("aten::expand_copy.out", expand_out, Error::kInvalidType,
           "argument 'out' has dtype int32");
  IntListArg twice({1, -1});
  KernelArgs squeeze_dims{f.evalue(), twice.evalue(), f_out.evalue(), EValue()};
  rejected("aten::squeeze_copy.dims_out", squeeze_dims, Error::kInvalidArgument,
           "argument 'dim' lists dimension 1 more than once");
  KernelArgs squeeze_dim{f.evalue(), EValue(int64_t{5}), f_out.evalue(), EValue()};
  rejected("aten::squeeze_copy.dim_out", squeeze_dim, Error::kInvalidArgument,
           "argument 'dim' is 5");
  KernelArgs squeeze_out{f.evalue(), i_out.evalue(), EValue()};
  rejected("aten::squeeze_copy.out", squeeze_out, Error::kInvalidType,
           "argument 'out' has dtype int32");

  TensorListArg pair({&f, &f});
  KernelArgs cat_out_type{pair.evalue(), EValue(int64_t{0}), i_out.evalue(), EValue()};
  rejected("aten::cat.out", cat_out_type, Error::kInvalidType,
           "result dtype float32 can't be cast to the dtype int32 of argument 'out'");
  KernelArgs cat_dim{pair.evalue(), EValue(int64_t{2}), f_out.evalue(), EValue()};
  rejected("aten::cat.out", cat_dim, Error::kInvalidArgument, "argument 'dim' is 2");
  TensorListArg with_scalar({&f, &scalar});
  KernelArgs cat_scalar{with_scalar.evalue(), EValue(int64_t{0}), f_out.evalue(), EValue()};
  rejected("aten::cat.out", cat_scalar, Error::kInvalidArgument,
           "has a 0-d tensor at position 1");
  TensorListArg empty({});
  KernelArgs cat_empty{empty.evalue(), EValue(int64_t{0}), f_out.evalue(), EValue()};
  rejected("aten::cat.out", cat_empty, Error::kInvalidArgument, "argument 'tensors' is empty");
  KernelArgs stack_dim{pair.evalue(), EValue(int64_t{3}), f_out.evalue(), EValue()};
  rejected("aten::stack.out", stack_dim, Error::kInvalidArgument, "argument 'dim' is 3");
  KernelArgs stack_out_type{pair.evalue(), EValue(int64_t{0}), i_out.evalue(), EValue()};
  rejected("aten::stack.out", stack_out_type, Error::kInvalidType,
           "result dtype float32 can't be cast to the dtype int32 of argument 'out'");
  KernelArgs stack_empty{empty.evalue(), EValue(int64_t{0}), f_out.evalue(), EValue()};
  rejected("aten::stack.out", stack_empty, Error::kInvalidArgument, "argument 'tensors' is empty");

  TestTensor q(ScalarType::kQInt8, {2, 3});
  KernelArgs to_copy_from{q.evalue(), EValue(false), EValue(), f_out.evalue(), EValue()};
  rejected("aten::_to_copy.out", to_copy_from, Error::kInvalidType, "argument 'self'");
  KernelArgs to_copy_to{f.evalue(), EValue(false), EValue(), q.evalue(), EValue()};
  rejected("aten::_to_copy.out", to_copy_to, Error::kInvalidType, "argument 'out'");
  KernelArgs dim_order_to{f.evalue(), EValue(false), EValue(), q.evalue(), EValue()};
  rejected("dim_order_ops::_to_dim_order_copy.out", dim_order_to, Error::kInvalidType,
           "argument 'out'");
}

TEST(DenseViewTest, ArgumentsARunChangesStillFailAsTheReferenceDoes) {
  // An index or step the program computes is read on every run: out of
  // range then, the prepared eval hands over to the reference's message.
  TestTensor self(ScalarType::kFloat, {2, 3}, mixed(6));
  TestTensor out(ScalarType::kFloat, {3}, {}, kernel_test::dynamic_bound());
  KernelArgs select{self.evalue(), EValue(int64_t{0}), EValue(int64_t{1}), out.evalue(), EValue()};
  const Prepared p = prepare_like_loader(portable_kernel_named("aten::select_copy.int_out"), select);
  ASSERT_TRUE(p.status.ok());
  select[2] = EValue(int64_t{2});
  KernelContext ctx(nullptr, nullptr, "aten::select_copy.int_out");
  p.eval(ctx, select.span());
  EXPECT_THAT(ctx.status(), ErrorIs(Error::kInvalidArgument, "index 2 is out of bounds"));

  KernelArgs slice{self.evalue(), EValue(int64_t{1}), EValue(), EValue(), EValue(int64_t{1}),
                   out.evalue(), EValue()};
  const Prepared s = prepare_like_loader(portable_kernel_named("aten::slice_copy.Tensor_out"), slice);
  ASSERT_TRUE(s.status.ok());
  slice[4] = EValue(int64_t{0});
  KernelContext slice_ctx(nullptr, nullptr, "aten::slice_copy.Tensor_out");
  s.eval(slice_ctx, slice.span());
  EXPECT_THAT(slice_ctx.status(), ErrorIs(Error::kInvalidArgument, "argument 'step' is 0"));
}

TEST(DenseIndexTest, EmbeddingMatchesTheReference) {
  for (ScalarType dtype : kAllDtypes) {
    for (ScalarType index_type : {ScalarType::kLong, ScalarType::kInt}) {
      SCOPED_TRACE(std::string(to_string(dtype)) + " " + to_string(index_type));
      TestTensor weight(dtype, {5, 3}, mixed(15));
      for (const std::vector<SizesType>& shape :
           std::vector<std::vector<SizesType>>{{4}, {2, 3}, {}, {0}, {1, 0}}) {
        const int64_t n = count(shape);
        std::vector<double> rows(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) rows[static_cast<size_t>(i)] = static_cast<double>((i * 3 + 4) % 5);
        TestTensor indices(index_type, shape, rows);
        std::vector<SizesType> out = shape;
        out.push_back(3);
        EXPECT_TRUE(expect_same_as_reference(
            "aten::embedding.out", dtype, out, kDense, [&](EValue o) {
              return std::vector<EValue>{weight.evalue(), indices.evalue(), EValue(int64_t{-1}),
                                         EValue(false), EValue(false), o};
            }));
      }
    }
  }
}

TEST(DenseIndexTest, EmbeddingChecksEveryIndexOnEachRun) {
  TestTensor weight(ScalarType::kFloat, {5, 2}, mixed(10));
  TestTensor indices(ScalarType::kLong, {3}, {1, 4, 0});
  TestTensor out(ScalarType::kFloat, {3, 2});
  KernelArgs args{weight.evalue(), indices.evalue(), EValue(int64_t{-1}), EValue(false),
                  EValue(false), out.evalue(), EValue()};
  const Kernel& kernel = portable_kernel_named("aten::embedding.out");
  const Prepared p = prepare_like_loader(kernel, args);
  ASSERT_TRUE(p.status.ok());
  ASSERT_NE(p.eval, kernel.eval);
  for (double bad : {5.0, -1.0}) {
    indices.set(2, bad);
    std::vector<double> before = out.values();
    KernelContext ctx(nullptr, nullptr, "aten::embedding.out");
    p.eval(ctx, args.span());
    EXPECT_THAT(ctx.status(), ErrorIs(Error::kInvalidArgument, "argument 'indices' holds"));
    EXPECT_EQ(out.values(), before);  // Nothing written before the check.
  }
}

TEST(DenseIndexTest, WhatTheProgramFixesIsRejectedAtPrepareNamingTheArgument) {
  auto rejected = [](const char* name, KernelArgs& args, Error code, const char* reason) {
    SCOPED_TRACE(name);
    const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
    EXPECT_THAT(p.status, ErrorIs(code, reason));
    KernelContext ctx(nullptr, nullptr, name);
    portable_kernel_named(name).eval(ctx, args.span());
    EXPECT_THAT(ctx.status(), ErrorIs(code, reason));
  };
  TestTensor matrix(ScalarType::kFloat, {5, 2}, mixed(10));
  TestTensor vector(ScalarType::kFloat, {5}, mixed(5));
  TestTensor long_index(ScalarType::kLong, {2}, {0, 1});
  TestTensor float_index(ScalarType::kFloat, {2}, {0, 1});
  TestTensor int_index(ScalarType::kInt, {5, 2});
  TestTensor f_out(ScalarType::kFloat, {2, 2});
  TestTensor i_out(ScalarType::kInt, {2, 2});
  auto embedding = [](TestTensor& w, TestTensor& i, TestTensor& o) {
    return std::make_unique<KernelArgs>(std::vector<EValue>{
        w.evalue(), i.evalue(), EValue(int64_t{-1}), EValue(false), EValue(false), o.evalue(),
        EValue()});
  };
  rejected("aten::embedding.out", *embedding(vector, long_index, f_out), Error::kInvalidArgument,
           "argument 'weight'");
  rejected("aten::embedding.out", *embedding(matrix, float_index, f_out), Error::kInvalidType,
           "argument 'indices' has dtype float32");
  rejected("aten::embedding.out", *embedding(matrix, long_index, i_out), Error::kInvalidType,
           "argument 'out' has dtype int32");
  TestTensor gather_index(ScalarType::kLong, {5, 2});
  KernelArgs gather_dim{matrix.evalue(), EValue(int64_t{2}), gather_index.evalue(), EValue(false),
                        f_out.evalue(), EValue()};
  rejected("aten::gather.out", gather_dim, Error::kInvalidArgument, "argument 'dim' is 2");
  KernelArgs gather_int{matrix.evalue(), EValue(int64_t{0}), int_index.evalue(), EValue(false),
                        f_out.evalue(), EValue()};
  rejected("aten::gather.out", gather_int, Error::kInvalidType,
           "argument 'index' has dtype int32");
  KernelArgs gather_out{matrix.evalue(), EValue(int64_t{0}), gather_index.evalue(), EValue(false),
                        i_out.evalue(), EValue()};
  rejected("aten::gather.out", gather_out, Error::kInvalidType, "argument 'out' has dtype int32");
}

}  // namespace
}  // namespace torchlight::portable
