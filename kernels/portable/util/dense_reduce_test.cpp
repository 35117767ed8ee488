// The prepared paths of the reductions (dense_reduce.h: sum, mean, prod,
// amax/amin, argmax/argmin, var/std, any/all, cumsum), of index.Tensor's
// integer-index and mask paths and of gather's dense path: for each, the installed eval leaves
// out exactly as the reference eval does (bytes and sizes) over dtypes,
// 0-d, empty, keepdim, negative dims, adjacent and non-adjacent dims, a
// layout the loops do not take (permuted) and dynamic shapes; what the program
// fixes is rejected at prepare (load) naming the argument, with the
// reference's reason; what only a run can show (an empty reduction without
// identity, an index out of range) fails with the reference's message.
#include "kernels/portable/util/dense_reduce.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
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
using ::torchlight::testing::ErrorIs;

const Layout kDense{};

// The dtypes the loops take, and two they leave to the reference.
constexpr ScalarType kLoopDtypes[] = {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kInt,
                                      ScalarType::kLong};
constexpr ScalarType kOtherDtypes[] = {ScalarType::kChar, ScalarType::kShort};

// Negatives, fractions, ties and (for floating dtypes) a NaN and -0.0.
std::vector<double> values(ScalarType dtype, size_t n) {
  static const double kValues[] = {1.5, -2.25, 3, 3, -7.5, 0.5, 2, -1, 9.75, 0, 4, -3};
  std::vector<double> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = kValues[(i * 5) % 12] + static_cast<double>(i % 7);
  if (is_floating_point(dtype) && n > 9) {
    v[9] = NAN;
    v[2] = -0.0;
  }
  return v;
}

int64_t count(const std::vector<SizesType>& sizes) {
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  return n;
}

// `sizes` reduced over `dims` (empty: all), keeping them as 1 with keepdim.
std::vector<SizesType> reduced(const std::vector<SizesType>& sizes, std::vector<int64_t> dims,
                               bool keepdim) {
  const int64_t rank = static_cast<int64_t>(sizes.size());
  std::vector<bool> is_reduced(sizes.size(), dims.empty());
  for (int64_t d : dims) {
    if (rank > 0) is_reduced[static_cast<size_t>((d + rank) % rank)] = true;
  }
  std::vector<SizesType> out;
  for (size_t d = 0; d < sizes.size(); ++d) {
    if (!is_reduced[d]) {
      out.push_back(sizes[d]);
    } else if (keepdim) {
      out.push_back(1);
    }
  }
  return out;
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
// `out_dtype` and `out_sizes`; both must succeed or fail alike, and leave
// the same sizes and bytes. Returns whether prepare installed another eval.
bool expect_same_as_reference(const char* name, ScalarType out_dtype,
                              const std::vector<SizesType>& out_sizes, const MakeArgs& make,
                              const Layout& out_layout = kDense) {
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
  EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed());
  EXPECT_EQ(std::string(fast_ctx.status().message()),
            std::string(reference_ctx.status().message()));
  EXPECT_EQ(fast_out.sizes(), reference_out.sizes());
  EXPECT_TRUE(same_bytes(fast_out, reference_out));
  return p.eval != kernel.eval;
}

// A self with values(), kept alive with the list arguments the calls use.
struct Input {
  Input(ScalarType dtype, std::vector<SizesType> sizes, const Layout& layout = kDense)
      : sizes(sizes), self(dtype, sizes, values(dtype, static_cast<size_t>(count(sizes))), layout) {}
  std::vector<SizesType> sizes;
  TestTensor self;
};

struct DimsCase {
  std::vector<SizesType> sizes;
  std::vector<int64_t> dims;
};

// Adjacent and non-adjacent reduced dims (a walk over several runs), size-1
// dims between them, more kept trailing elements than kColumns, and empty
// kept or reduced dims.
const std::vector<DimsCase>& dims_cases() {
  static const std::vector<DimsCase> cases = {
      {{2, 3, 4}, {}},           {{2, 3, 4}, {0}},          {{2, 3, 4}, {1}},
      {{2, 3, 4}, {-1}},         {{2, 3, 4}, {0, 1}},       {{2, 3, 4}, {-1, 1}},
      {{2, 3, 4}, {0, 2}},       {{2, 3, 4}, {2, 1, 0}},    {{}, {}},
      {{}, {-1}},                {{3, 70}, {0}},            {{3, 70}, {1}},
      {{2, 130, 2}, {0}},        {{0, 3}, {1}},             {{0, 3}, {0}},
      {{2, 3, 4, 5}, {0, 2, 3}}, {{2, 3, 4, 5}, {1, 3}},    {{2, 3, 4, 5}, {-1, 1}},
      {{2, 1, 4}, {0, 2}},       {{2, 3, 2, 70}, {0, 2}},   {{2, 2, 2, 2, 3}, {0, 2, 4}},
      {{2, 0, 3}, {0, 2}},       {{2, 3, 0}, {0, 2}},       {{3, 2, 1, 2}, {0, 1, 3}},
  };
  return cases;
}

// "sizes [2,3,4] dims [0,2] keepdim 1", for SCOPED_TRACE.
std::string describe(const DimsCase& c, bool keepdim) {
  auto list = [](const auto& v) {
    std::string text = "[";
    for (size_t i = 0; i < v.size(); ++i) text += (i ? "," : "") + std::to_string(v[i]);
    return text + "]";
  };
  return "sizes " + list(c.sizes) + " dims " + list(c.dims) + " keepdim " +
         std::to_string(keepdim);
}

TEST(DenseReduceTest, SumMeanProdMatchTheReference) {
  for (ScalarType dtype : kLoopDtypes) {
    SCOPED_TRACE(to_string(dtype));
    for (const DimsCase& c : dims_cases()) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(describe(c, keepdim));
        Input in(dtype, c.sizes);
        IntListArg dims(c.dims);
        const std::vector<SizesType> out = reduced(c.sizes, c.dims, keepdim);
        auto with = [&](EValue dtype_arg) {
          return [&, dtype_arg](EValue o) {
            return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(keepdim),
                                       dtype_arg, o};
          };
        };
        EXPECT_TRUE(expect_same_as_reference("aten::sum.IntList_out", dtype, out, with(EValue())));
        // A conversion first: into int64, and into float64 for a floating self.
        const ScalarType wide = is_floating_point(dtype) ? ScalarType::kDouble : ScalarType::kLong;
        EXPECT_TRUE(expect_same_as_reference("aten::sum.IntList_out", wide, out,
                                           with(EValue(static_cast<int64_t>(wide)))));
        if (is_floating_point(dtype)) {
          EXPECT_TRUE(expect_same_as_reference("aten::mean.out", dtype, out, with(EValue())));
        } else {
          EXPECT_TRUE(expect_same_as_reference("aten::mean.out", ScalarType::kFloat, out,
                                             with(EValue(int64_t{6}))));
        }
      }
      if (c.dims.size() == 1) {
        for (bool keepdim : {false, true}) {
          Input in(dtype, c.sizes);
          const int64_t dim = c.dims[0];
          EXPECT_TRUE(expect_same_as_reference(
              "aten::prod.int_out", dtype, reduced(c.sizes, c.dims, keepdim), [&](EValue o) {
                return std::vector<EValue>{in.self.evalue(), EValue(dim), EValue(keepdim),
                                           EValue(), o};
              }));
        }
      }
    }
    Input in(dtype, {3, 5});
    auto all = [&](EValue o) { return std::vector<EValue>{in.self.evalue(), EValue(), o}; };
    EXPECT_TRUE(expect_same_as_reference("aten::sum.out", dtype, {}, all));
    EXPECT_TRUE(expect_same_as_reference("aten::prod.out", dtype, {}, all));
    if (is_floating_point(dtype)) {
      EXPECT_TRUE(expect_same_as_reference("aten::mean.dtype_out", dtype, {}, all));
    }
  }
}

// float16 / bfloat16 sums, means and products: the loops take them into
// their own dtype or float32, accumulating in double as the reference does.
TEST(DenseReduceTest, ReducedFloatSumAndMeanMatchTheReference) {
  for (ScalarType dtype : {ScalarType::kHalf, ScalarType::kBFloat16}) {
    SCOPED_TRACE(to_string(dtype));
    for (const DimsCase& c : dims_cases()) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(describe(c, keepdim));
        Input in(dtype, c.sizes);
        IntListArg dims(c.dims);
        const std::vector<SizesType> out = reduced(c.sizes, c.dims, keepdim);
        auto with = [&](EValue dtype_arg) {
          return [&, dtype_arg](EValue o) {
            return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(keepdim),
                                       dtype_arg, o};
          };
        };
        const EValue to_float(static_cast<int64_t>(ScalarType::kFloat));
        for (const char* op : {"aten::sum.IntList_out", "aten::mean.out"}) {
          SCOPED_TRACE(op);
          EXPECT_TRUE(expect_same_as_reference(op, dtype, out, with(EValue())));
          EXPECT_TRUE(expect_same_as_reference(op, ScalarType::kFloat, out, with(to_float)));
        }
      }
    }
    // A long row: the double accumulator is what keeps it exact.
    std::vector<double> ones(3000, 1.0);
    ones[7] = 0.001;
    TestTensor long_row(dtype, {3000}, ones);
    auto all = [&](EValue o) { return std::vector<EValue>{long_row.evalue(), EValue(), o}; };
    EXPECT_TRUE(expect_same_as_reference("aten::sum.out", dtype, {}, all));
    EXPECT_TRUE(expect_same_as_reference("aten::mean.dtype_out", dtype, {}, all));
    EXPECT_TRUE(expect_same_as_reference("aten::prod.out", dtype, {}, all));
    // prod over one dim, into the input's dtype or float32.
    Input in(dtype, {5, 70});
    const EValue to_float(static_cast<int64_t>(ScalarType::kFloat));
    for (int64_t dim : {0, -1}) {
      for (EValue dtype_arg : {EValue(), to_float}) {
        SCOPED_TRACE(dim);
        EXPECT_TRUE(expect_same_as_reference(
            "aten::prod.int_out", dtype_arg.is_none() ? dtype : ScalarType::kFloat,
            reduced({5, 70}, {dim}, false), [&](EValue o) {
              return std::vector<EValue>{in.self.evalue(), EValue(dim), EValue(false), dtype_arg,
                                         o};
            }));
      }
    }
  }
}

// float16/bfloat16 too (compared and tested in float, as the reference
// does), except var/std and cumsum, which keep the reference.
TEST(DenseReduceTest, ExtremaAndVarianceMatchTheReference) {
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kInt,
                           ScalarType::kLong, ScalarType::kHalf, ScalarType::kBFloat16}) {
    SCOPED_TRACE(to_string(dtype));
    const bool reduced_float = dtype == ScalarType::kHalf || dtype == ScalarType::kBFloat16;
    for (const DimsCase& c : dims_cases()) {
      for (bool keepdim : {false, true}) {
        SCOPED_TRACE(describe(c, keepdim));
        Input in(dtype, c.sizes);
        IntListArg dims(c.dims);
        const std::vector<SizesType> out = reduced(c.sizes, c.dims, keepdim);
        auto plain = [&](EValue o) {
          return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(keepdim), o};
        };
        // Empty reductions fail in both evals with the reference's message.
        EXPECT_TRUE(expect_same_as_reference("aten::amax.out", dtype, out, plain));
        EXPECT_TRUE(expect_same_as_reference("aten::amin.out", dtype, out, plain));
        for (ScalarType out_type : {ScalarType::kBool, ScalarType::kByte}) {
          EXPECT_TRUE(expect_same_as_reference("aten::any.dims_out", out_type,
                                             c.dims.empty() ? c.sizes : out, plain));
          EXPECT_TRUE(expect_same_as_reference("aten::all.dims_out", out_type,
                                             c.dims.empty() ? c.sizes : out, plain));
        }
        if (!is_floating_point(dtype) || reduced_float) continue;
        for (EValue correction : {EValue(), EValue(0.5), EValue(int64_t{0})}) {
          EXPECT_TRUE(expect_same_as_reference("aten::var.correction_out", dtype, out,
                                             [&](EValue o) {
                                               return std::vector<EValue>{
                                                   in.self.evalue(), dims.evalue(), correction,
                                                   EValue(keepdim), o};
                                             }));
        }
        EXPECT_TRUE(expect_same_as_reference("aten::std.out", dtype, out, [&](EValue o) {
                    return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(true),
                                               EValue(keepdim), o};
                  }));
      }
    }
    // One dim, or none for the flattened tensor.
    for (const std::vector<SizesType>& sizes :
         std::vector<std::vector<SizesType>>{{2, 3, 4}, {}, {5, 70}, {0, 3}}) {
      for (EValue dim : {EValue(), EValue(int64_t{0}), EValue(int64_t{-1})}) {
        for (bool keepdim : {false, true}) {
          Input in(dtype, sizes);
          std::vector<int64_t> dims;
          if (!dim.is_none()) dims.push_back(dim.to_int());
          std::vector<SizesType> out = reduced(sizes, dims, keepdim);
          auto args = [&](EValue o) {
            return std::vector<EValue>{in.self.evalue(), dim, EValue(keepdim), o};
          };
          EXPECT_TRUE(expect_same_as_reference("aten::argmax.out", ScalarType::kLong, out, args));
          EXPECT_TRUE(expect_same_as_reference("aten::argmin.out", ScalarType::kLong, out, args));
          if (dim.is_none()) continue;
          EXPECT_TRUE(expect_same_as_reference("aten::any.out", ScalarType::kBool, out, args));
          EXPECT_TRUE(expect_same_as_reference("aten::all.out", ScalarType::kByte, out, args));
          if (reduced_float) continue;
          EXPECT_TRUE(expect_same_as_reference("aten::cumsum.out", dtype, sizes, [&](EValue o) {
            return std::vector<EValue>{in.self.evalue(), dim, EValue(), o};
          }));
        }
      }
    }
    Input in(dtype, {4, 3});
    EXPECT_TRUE(expect_same_as_reference("aten::any.all_out", ScalarType::kBool, {}, [&](EValue o) {
      return std::vector<EValue>{in.self.evalue(), o};
    }));
  }
  // Bool and uint8 masks into any/all.
  for (ScalarType dtype : {ScalarType::kBool, ScalarType::kByte}) {
    TestTensor mask(dtype, {3, 4}, {0, 1, 0, 0, 0, 0, 0, 0, 1, 1, 1, 1});
    IntListArg last({-1});
    auto args = [&](EValue o) {
      return std::vector<EValue>{mask.evalue(), last.evalue(), EValue(false), o};
    };
    EXPECT_TRUE(expect_same_as_reference("aten::any.dims_out", ScalarType::kBool, {3}, args));
    EXPECT_TRUE(expect_same_as_reference("aten::all.dims_out", ScalarType::kBool, {3}, args));
  }
}

TEST(DenseReduceTest, OtherDtypesAndStridedViewsKeepTheReference) {
  for (ScalarType dtype : kOtherDtypes) {
    Input in(dtype, {2, 3, 4});
    IntListArg dims({1});
    auto args = [&](EValue o) {
      return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(false), o};
    };
    EXPECT_FALSE(expect_same_as_reference("aten::amax.out", dtype, {2, 4}, args));
  }
  // Strides of its own (every other element): not a program's layout.
  Input strided(ScalarType::kFloat, {2, 3}, kernel_test::strides({6, 2}));
  IntListArg dims({1});
  EXPECT_FALSE(expect_same_as_reference("aten::sum.IntList_out", ScalarType::kFloat, {2},
                                        [&](EValue o) {
                                          return std::vector<EValue>{strided.self.evalue(),
                                                                     dims.evalue(), EValue(false),
                                                                     EValue(), o};
                                        }));
}

// Self and out in other dim orders (channels-last, permuted), each with
// its own: the loops walk their strides, bit-identical to the reference.
// The global average pool of a channels-last image (mean over H and W,
// keepdim) is among them.
TEST(DenseReduceTest, ChannelsLastAndPermutedLayoutsMatchTheReference) {
  struct LayoutCase {
    std::vector<SizesType> sizes;
    std::vector<DimOrderType> self_order;
    std::vector<int64_t> dims;
    bool keepdim;
    std::vector<DimOrderType> out_order;  // Empty: contiguous.
  };
  const std::vector<DimOrderType> kLast = {0, 2, 3, 1};
  const LayoutCase cases[] = {
      {{2, 3, 4, 5}, kLast, {2, 3}, true, kLast},
      {{2, 3, 4, 5}, kLast, {2, 3}, true, {}},
      {{2, 3, 4, 5}, kLast, {-1, -2}, false, {}},
      {{2, 70, 3, 2}, kLast, {2, 3}, true, kLast},
      {{2, 3, 4, 5}, kLast, {1}, true, kLast},
      {{2, 3, 4, 5}, kLast, {1}, false, {}},
      {{2, 3, 4, 5}, kLast, {0, 2}, true, kLast},
      {{2, 3, 4, 5}, {0, 1, 2, 3}, {2, 3}, true, kLast},
      {{3, 4, 5}, {2, 0, 1}, {1}, false, {1, 0}},
      {{3, 4, 5}, {1, 2, 0}, {0, 2}, true, {1, 2, 0}},
      {{2, 0, 3, 2}, kLast, {2, 3}, true, kLast},
      // Self's stride-1 dim (C) is not out's: W is the one with stride 1 in both.
      {{2, 3, 4, 5}, kLast, {2}, false, {}},
      // Dims 1 and 2 continue each other in self but not in out.
      {{3, 4, 5}, {0, 1, 2}, {0}, false, {1, 0}},
  };
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kLong}) {
    SCOPED_TRACE(to_string(dtype));
    for (const LayoutCase& c : cases) {
      SCOPED_TRACE(describe({c.sizes, c.dims}, c.keepdim) + " self order " +
                   ::testing::PrintToString(c.self_order) + " out order " +
                   ::testing::PrintToString(c.out_order));
      Input in(dtype, c.sizes, kernel_test::dim_order(c.self_order));
      IntListArg dims(c.dims);
      const std::vector<SizesType> out = reduced(c.sizes, c.dims, c.keepdim);
      const Layout out_layout = c.out_order.empty() ? kDense : kernel_test::dim_order(c.out_order);
      auto plain = [&](EValue o) {
        return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(c.keepdim), o};
      };
      auto with_dtype = [&](EValue o) {
        return std::vector<EValue>{in.self.evalue(), dims.evalue(), EValue(c.keepdim), EValue(),
                                   o};
      };
      EXPECT_TRUE(expect_same_as_reference("aten::sum.IntList_out", dtype, out, with_dtype,
                                           out_layout));
      EXPECT_TRUE(expect_same_as_reference("aten::amax.out", dtype, out, plain, out_layout));
      EXPECT_TRUE(expect_same_as_reference("aten::any.dims_out", ScalarType::kBool, out, plain,
                                           out_layout));
      if (!is_floating_point(dtype)) continue;
      EXPECT_TRUE(expect_same_as_reference("aten::mean.out", dtype, out, with_dtype, out_layout));
      EXPECT_TRUE(expect_same_as_reference("aten::var.correction_out", dtype, out,
                                           [&](EValue o) {
                                             return std::vector<EValue>{
                                                 in.self.evalue(), dims.evalue(), EValue(),
                                                 EValue(c.keepdim), o};
                                           },
                                           out_layout));
    }
  }
}

TEST(DenseReduceTest, DynamicShapesRunThePreparedPathAtEachSize) {
  TestTensor self(ScalarType::kFloat, {4, 6}, values(ScalarType::kFloat, 24),
                  kernel_test::dynamic_bound());
  IntListArg last({-1});
  IntListArg first({0});
  struct Call {
    const char* name;
    ScalarType out_dtype;
    std::vector<SizesType> out_sizes;  // At the upper bound.
    std::function<std::vector<EValue>(EValue)> args;
  };
  const Call calls[] = {
      {"aten::sum.IntList_out", ScalarType::kFloat, {4},
       [&](EValue o) {
         return std::vector<EValue>{self.evalue(), last.evalue(), EValue(false), EValue(), o};
       }},
      {"aten::amax.out", ScalarType::kFloat, {1, 6},
       [&](EValue o) { return std::vector<EValue>{self.evalue(), first.evalue(), EValue(true), o}; }},
      {"aten::argmax.out", ScalarType::kLong, {6},
       [&](EValue o) {
         return std::vector<EValue>{self.evalue(), EValue(int64_t{0}), EValue(false), o};
       }},
      {"aten::cumsum.out", ScalarType::kFloat, {4, 6},
       [&](EValue o) { return std::vector<EValue>{self.evalue(), EValue(int64_t{0}), EValue(), o}; }},
      {"aten::var.correction_out", ScalarType::kFloat, {6},
       [&](EValue o) {
         return std::vector<EValue>{self.evalue(), first.evalue(), EValue(), EValue(false), o};
       }},
  };
  for (const Call& c : calls) {
    SCOPED_TRACE(c.name);
    const SizesType full[] = {4, 6};
    ASSERT_TRUE(self.impl().resize({full, 2}).ok());
    TestTensor fast(c.out_dtype, c.out_sizes, {}, kernel_test::dynamic_bound());
    TestTensor reference(c.out_dtype, c.out_sizes, {}, kernel_test::dynamic_bound());
    auto make = [&](TestTensor& out) {
      std::vector<EValue> list = c.args(out.evalue());
      list.push_back(EValue());
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
      KernelContext fast_ctx(nullptr, nullptr, c.name);
      KernelContext reference_ctx(nullptr, nullptr, c.name);
      p.eval(fast_ctx, fast_args->span());
      kernel.eval(reference_ctx, reference_args->span());
      // amax and argmax over 0 rows fail: both the same way.
      EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed());
      EXPECT_EQ(std::string(fast_ctx.status().message()),
                std::string(reference_ctx.status().message()));
      if (reference_ctx.failed()) continue;
      EXPECT_EQ(fast.sizes(), reference.sizes());
      EXPECT_TRUE(same_bytes(fast, reference));
    }
  }
}

// Rejected at prepare with `reason`, and by the reference eval alike.
void expect_rejected(const char* name, KernelArgs& args, Error code, const char* reason) {
  SCOPED_TRACE(name);
  const Prepared p = prepare_like_loader(portable_kernel_named(name), args);
  EXPECT_THAT(p.status, ErrorIs(code, reason));
  KernelContext ctx(nullptr, nullptr, name);
  portable_kernel_named(name).eval(ctx, args.span());
  EXPECT_THAT(ctx.status(), ErrorIs(code, reason));
}

TEST(DenseReduceTest, WhatTheProgramFixesIsRejectedAtPrepareNamingTheArgument) {
  TestTensor f(ScalarType::kFloat, {2, 3}, values(ScalarType::kFloat, 6));
  TestTensor i(ScalarType::kInt, {2, 3}, values(ScalarType::kInt, 6));
  TestTensor b(ScalarType::kBool, {2, 3});
  TestTensor f_out(ScalarType::kFloat, {2});
  TestTensor i_out(ScalarType::kInt, {2});
  TestTensor l_out(ScalarType::kLong, {2});
  TestTensor f_full(ScalarType::kFloat, {2, 3});
  IntListArg out_of_range({2});
  IntListArg twice({0, -2});
  IntListArg last({1});
  KernelArgs sum_range{f.evalue(), out_of_range.evalue(), EValue(false), EValue(),
                       f_out.evalue(), EValue()};
  expect_rejected("aten::sum.IntList_out", sum_range, Error::kInvalidArgument,
                  "argument 'dim': dim 2 is out of range for a 2-d tensor");
  KernelArgs sum_twice{f.evalue(), twice.evalue(), EValue(false), EValue(), f_out.evalue(),
                       EValue()};
  expect_rejected("aten::sum.IntList_out", sum_twice, Error::kInvalidArgument,
                  "argument 'dim': dim 0 appears more than once");
  KernelArgs sum_dtype{f.evalue(), last.evalue(), EValue(false), EValue(int64_t{4}),
                       f_out.evalue(), EValue()};
  expect_rejected("aten::sum.IntList_out", sum_dtype, Error::kInvalidType,
                  "argument 'out' has dtype float32, but argument 'dtype' asks for int64");
  KernelArgs mean_int{i.evalue(), last.evalue(), EValue(false), EValue(), f_out.evalue(),
                      EValue()};
  expect_rejected("aten::mean.out", mean_int, Error::kInvalidType,
                  "argument 'self' has dtype int32: the mean needs a floating dtype");
  KernelArgs mean_out{f.evalue(), last.evalue(), EValue(false), EValue(), i_out.evalue(),
                      EValue()};
  expect_rejected("aten::mean.out", mean_out, Error::kInvalidType,
                  "argument 'out' has dtype int32, which is not supported");
  KernelArgs amax_out{f.evalue(), last.evalue(), EValue(false), i_out.evalue(), EValue()};
  expect_rejected("aten::amax.out", amax_out, Error::kInvalidType,
                  "argument 'out' has dtype int32, expected float32");
  KernelArgs argmax_out{f.evalue(), EValue(int64_t{1}), EValue(false), f_out.evalue(), EValue()};
  expect_rejected("aten::argmax.out", argmax_out, Error::kInvalidType,
                  "argument 'out' has dtype float32, expected int64");
  KernelArgs argmax_bool{b.evalue(), EValue(int64_t{1}), EValue(false), l_out.evalue(), EValue()};
  expect_rejected("aten::argmin.out", argmax_bool, Error::kInvalidType,
                  "argument 'self' has dtype bool, which is not supported");
  KernelArgs argmax_dim{f.evalue(), EValue(int64_t{-3}), EValue(false), l_out.evalue(), EValue()};
  expect_rejected("aten::argmax.out", argmax_dim, Error::kInvalidArgument,
                  "argument 'dim': dim -3 is out of range");
  KernelArgs var_int{i.evalue(), last.evalue(), EValue(), EValue(false), f_out.evalue(), EValue()};
  expect_rejected("aten::var.correction_out", var_int, Error::kInvalidType,
                  "argument 'self' has dtype int32, expected a floating dtype");
  KernelArgs any_out{f.evalue(), EValue(int64_t{1}), EValue(false), f_out.evalue(), EValue()};
  expect_rejected("aten::any.out", any_out, Error::kInvalidType,
                  "argument 'out' has dtype float32, expected bool or uint8");
  KernelArgs prod_dim{f.evalue(), EValue(int64_t{5}), EValue(false), EValue(), f_out.evalue(),
                      EValue()};
  expect_rejected("aten::prod.int_out", prod_dim, Error::kInvalidArgument,
                  "argument 'dim': dim 5 is out of range");
  KernelArgs cumsum_dtype{f.evalue(), EValue(int64_t{0}), EValue(int64_t{7}), f_full.evalue(),
                          EValue()};
  expect_rejected("aten::cumsum.out", cumsum_dtype, Error::kInvalidType,
                  "argument 'dtype' asks for float64");
  KernelArgs cumsum_dim{f.evalue(), EValue(int64_t{2}), EValue(), f_full.evalue(), EValue()};
  expect_rejected("aten::cumsum.out", cumsum_dim, Error::kInvalidArgument,
                  "argument 'dim': dim 2 is out of range");
}

// ---- index.Tensor ----

// A Tensor?[] argument over test tensors: null entries are None.
struct IndexListArg : kernel_test::OptionalTensorListArg {
  explicit IndexListArg(const std::vector<TestTensor*>& tensors)
      : OptionalTensorListArg(evalues(tensors)) {}
  static std::vector<EValue> evalues(const std::vector<TestTensor*>& tensors) {
    std::vector<EValue> items;
    for (TestTensor* t : tensors) items.push_back(t == nullptr ? EValue() : t->evalue());
    return items;
  }
};

TEST(DenseIndexTest, IntegerIndicesMatchTheReference) {
  TestTensor rows(ScalarType::kLong, {3}, {4, -1, 0});
  TestTensor grid(ScalarType::kInt, {2, 2}, {1, -2, 0, 2});
  TestTensor column(ScalarType::kLong, {2, 1}, {0, 3});
  TestTensor across(ScalarType::kInt, {3}, {2, 1, -4});
  TestTensor small(ScalarType::kLong, {3}, {2, -1, 0});
  TestTensor scalar(ScalarType::kLong, {}, {-2});
  TestTensor empty(ScalarType::kLong, {0});
  TestTensor mask(ScalarType::kBool, {5}, {1, 0, 1, 1, 0});
  struct Case {
    std::vector<TestTensor*> indices;
    std::vector<SizesType> out;
    bool prepared;
  };
  const Case cases[] = {
      {{&rows}, {3, 4, 3}, true},
      {{nullptr, &grid}, {5, 2, 2, 3}, true},
      {{&column, &across}, {2, 3, 3}, true},
      {{nullptr, nullptr, &small}, {5, 4, 3}, true},
      {{nullptr, nullptr, &across}, {5, 4, 3}, true},  // -4 is out of range: both fail.
      {{&scalar}, {4, 3}, true},
      {{&empty}, {0, 4, 3}, true},
      {{nullptr, &across, nullptr}, {5, 3, 3}, true},
      {{&rows, nullptr, &small}, {3, 4}, false},  // Not adjacent: B first.
      {{&mask}, {3, 4, 3}, true},  // A mask alone: the mask path (DenseIndexMaskTest).
      {{&mask, &small}, {3, 3}, true},  // A mask with an integer index (DenseIndexMixedTest).
  };
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kLong, ScalarType::kBool,
                           ScalarType::kHalf}) {
    SCOPED_TRACE(to_string(dtype));
    Input in(dtype, {5, 4, 3});
    for (const Case& c : cases) {
      IndexListArg indices(c.indices);
      EXPECT_EQ(expect_same_as_reference("aten::index.Tensor_out", dtype, c.out,
                                         [&](EValue o) {
                                           return std::vector<EValue>{in.self.evalue(),
                                                                      indices.evalue(), o};
                                         }),
                c.prepared);
    }
  }
}

// self[mask] with one bool/uint8 mask (Nones before it): over the first dim,
// two dims, a middle dim, every dim; all false, all true, uint8 values
// other than 1, an empty dim; and, left to the reference, a mask whose
// shape does not match the dims it covers.
TEST(DenseIndexMaskTest, MasksMatchTheReference) {
  TestTensor rows(ScalarType::kBool, {5}, {1, 0, 1, 1, 0});
  TestTensor none_true(ScalarType::kBool, {5}, {0, 0, 0, 0, 0});
  TestTensor all_true(ScalarType::kBool, {5}, {1, 1, 1, 1, 1});
  TestTensor bytes(ScalarType::kByte, {5}, {0, 2, 255, 0, 1});
  TestTensor plane(ScalarType::kBool, {5, 4}, values(ScalarType::kLong, 20));
  TestTensor middle(ScalarType::kBool, {4}, {0, 1, 1, 0});
  TestTensor last(ScalarType::kByte, {3}, {1, 0, 7});
  TestTensor whole(ScalarType::kBool, {5, 4, 3}, values(ScalarType::kLong, 60));
  TestTensor wrong(ScalarType::kBool, {4}, {1, 0, 1, 1});
  // Outs with a dynamic bound (self's elements): each eval sizes its out
  // from its own count of selected elements.
  struct Case {
    std::vector<TestTensor*> indices;
    std::vector<SizesType> bound;
    bool prepared;
  };
  const Case cases[] = {
      {{&rows}, {5, 4, 3}, true},
      {{&none_true}, {5, 4, 3}, true},
      {{&all_true}, {5, 4, 3}, true},
      {{&bytes}, {5, 4, 3}, true},
      {{&plane}, {20, 3}, true},
      {{nullptr, &middle}, {5, 4, 3}, true},
      {{nullptr, nullptr, &last}, {5, 4, 3}, true},
      {{&whole}, {60}, true},
      {{&wrong}, {5, 4, 3}, false},  // Shape [4] over a dim of 5: both fail alike.
  };
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kLong,
                           ScalarType::kBool, ScalarType::kHalf, ScalarType::kByte}) {
    SCOPED_TRACE(to_string(dtype));
    Input in(dtype, {5, 4, 3});
    for (const Case& c : cases) {
      SCOPED_TRACE(::testing::PrintToString(c.bound));
      IndexListArg indices(c.indices);
      EXPECT_EQ(expect_same_as_reference("aten::index.Tensor_out", dtype, c.bound,
                                         [&](EValue o) {
                                           return std::vector<EValue>{in.self.evalue(),
                                                                      indices.evalue(), o};
                                         },
                                         kernel_test::dynamic_bound()),
                c.prepared);
    }
  }
  // An empty self: nothing selected from nothing.
  Input empty(ScalarType::kFloat, {0, 3});
  TestTensor no_rows(ScalarType::kBool, {0});
  IndexListArg no_rows_index({&no_rows});
  EXPECT_TRUE(expect_same_as_reference("aten::index.Tensor_out", ScalarType::kFloat, {0, 3},
                                       [&](EValue o) {
                                         return std::vector<EValue>{empty.self.evalue(),
                                                                    no_rows_index.evalue(), o};
                                       }));
}

// The mask's values, and self's shape with it, change between runs: out
// takes each run's count of true elements.
TEST(DenseIndexMaskTest, OutFollowsTheMaskOnEachRun) {
  TestTensor self(ScalarType::kFloat, {6, 2}, values(ScalarType::kFloat, 12),
                  kernel_test::dynamic_bound());
  TestTensor mask(ScalarType::kBool, {6}, {1, 1, 1, 1, 1, 1}, kernel_test::dynamic_bound());
  IndexListArg indices({&mask});
  TestTensor fast(ScalarType::kFloat, {6, 2}, {}, kernel_test::dynamic_bound());
  TestTensor reference(ScalarType::kFloat, {6, 2}, {}, kernel_test::dynamic_bound());
  KernelArgs fast_args{self.evalue(), indices.evalue(), fast.evalue(), EValue()};
  KernelArgs reference_args{self.evalue(), indices.evalue(), reference.evalue(), EValue()};
  const Kernel& kernel = portable_kernel_named("aten::index.Tensor_out");
  const Prepared p = prepare_like_loader(kernel, fast_args);
  ASSERT_TRUE(p.status.ok()) << p.status.message();
  EXPECT_NE(p.eval, kernel.eval);
  const std::vector<std::vector<double>> runs = {
      {0, 1, 0, 1, 1, 0}, {0, 0, 0, 0, 0, 0}, {1, 1, 1, 1, 1, 1}, {1, 0, 1}, {}};
  for (const std::vector<double>& bits : runs) {
    SCOPED_TRACE(::testing::PrintToString(bits));
    const SizesType rows[] = {static_cast<SizesType>(bits.size()), 2};
    ASSERT_TRUE(self.impl().resize({rows, 2}).ok());
    ASSERT_TRUE(mask.impl().resize({rows, 1}).ok());
    for (size_t i = 0; i < bits.size(); ++i) mask.set(static_cast<int64_t>(i), bits[i]);
    KernelContext fast_ctx(nullptr, nullptr, kernel.name);
    KernelContext reference_ctx(nullptr, nullptr, kernel.name);
    p.eval(fast_ctx, fast_args.span());
    kernel.eval(reference_ctx, reference_args.span());
    EXPECT_FALSE(fast_ctx.failed()) << fast_ctx.status().message();
    EXPECT_FALSE(reference_ctx.failed()) << reference_ctx.status().message();
    EXPECT_EQ(fast.sizes(), reference.sizes());
    EXPECT_TRUE(same_bytes(fast, reference));
  }
}

// One bool/uint8 mask among integer indices, adjacent (util/index_mixed.h):
// the mask's true coordinates broadcast with the integer indices, in front,
// behind or in the middle, over one or two dims, with broadcasting integer
// shapes, one or no true element, uint8 values other than 1, negative
// indices, and, failing alike in both evals, an index out of range and
// shapes that do not broadcast. Indexed dims apart stay with the reference.
TEST(DenseIndexMixedTest, MaskWithIntegerIndicesMatchesTheReference) {
  TestTensor rows(ScalarType::kBool, {5}, {1, 0, 1, 1, 0});
  TestTensor one_row(ScalarType::kBool, {5}, {0, 0, 0, 1, 0});
  TestTensor no_rows(ScalarType::kBool, {5}, {0, 0, 0, 0, 0});
  TestTensor byte_rows(ScalarType::kByte, {5}, {2, 0, 255, 0, 1});
  TestTensor middle(ScalarType::kBool, {4}, {0, 1, 1, 0});
  TestTensor plane(ScalarType::kBool, {5, 4}, {1, 0, 0, 1, 0, 0, 1, 0, 0, 0,
                                                0, 0, 1, 0, 0, 0, 0, 0, 0, 1});
  TestTensor three(ScalarType::kLong, {3}, {2, -1, 0});
  TestTensor two(ScalarType::kInt, {2}, {4, -5});
  TestTensor column(ScalarType::kLong, {2, 1}, {0, -1});
  TestTensor scalar(ScalarType::kLong, {}, {1});
  TestTensor pair(ScalarType::kLong, {2}, {2, -1});
  TestTensor far(ScalarType::kLong, {2}, {0, 3});  // 3 is out of range for dim 2.
  struct Case {
    std::vector<TestTensor*> indices;
    std::vector<SizesType> bound;  // Of out's rank.
    bool prepared;
  };
  const Case cases[] = {
      {{&rows, &three}, {5, 3}, true},           // [M=3] with [3] over dims 0 | 1.
      {{&two, &middle}, {5, 3}, true},           // [2] with [M=2] over dims 0 | 1.
      {{nullptr, &middle, &pair}, {5, 5}, true}, // Behind a None: self dim 0 first.
      {{&column, &middle}, {2, 2, 3}, true},     // [2, 1] with [2]: B is [2, 2].
      {{&plane, &scalar}, {20}, true},           // A 2-D mask with a 0-d index.
      {{&plane, &three}, {20}, true},            // M = 4 against 3: both fail alike.
      {{&one_row, &three}, {5, 3}, true},        // M = 1 broadcasts.
      {{&no_rows, &scalar}, {5, 3}, true},       // Nothing selected.
      {{&byte_rows, &scalar}, {5, 3}, true},     // uint8: nonzero selects.
      {{nullptr, &middle, &far}, {5, 5}, true},  // Out of range: both fail alike.
      {{&rows, nullptr, &three}, {5, 4}, false}, // Apart: the reference.
  };
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kDouble, ScalarType::kLong,
                           ScalarType::kBool, ScalarType::kHalf, ScalarType::kByte}) {
    SCOPED_TRACE(to_string(dtype));
    Input in(dtype, {5, 4, 3});
    for (size_t i = 0; i < std::size(cases); ++i) {
      SCOPED_TRACE(i);
      IndexListArg indices(cases[i].indices);
      EXPECT_EQ(expect_same_as_reference("aten::index.Tensor_out", dtype, cases[i].bound,
                                         [&](EValue o) {
                                           return std::vector<EValue>{in.self.evalue(),
                                                                      indices.evalue(), o};
                                         },
                                         kernel_test::dynamic_bound()),
                cases[i].prepared);
    }
  }
}

TEST(DenseIndexTest, BadIndicesAreRejectedAtPrepareOrLikeTheReference) {
  TestTensor self(ScalarType::kFloat, {5, 4}, values(ScalarType::kFloat, 20));
  TestTensor out(ScalarType::kFloat, {2, 4});
  TestTensor int_out(ScalarType::kInt, {2, 4});
  TestTensor floats(ScalarType::kFloat, {2}, {0, 1});
  TestTensor good(ScalarType::kLong, {2}, {0, 1});
  TestTensor far(ScalarType::kLong, {2}, {0, 5});
  IndexListArg float_index({&floats});
  KernelArgs float_args{self.evalue(), float_index.evalue(), out.evalue(), EValue()};
  expect_rejected("aten::index.Tensor_out", float_args, Error::kInvalidType,
                  "argument 'indices' has a float32 tensor at position 0");
  IndexListArg none({nullptr});
  KernelArgs none_args{self.evalue(), none.evalue(), out.evalue(), EValue()};
  expect_rejected("aten::index.Tensor_out", none_args, Error::kInvalidArgument,
                  "argument 'indices' has no index tensor");
  IndexListArg three({&good, nullptr, &good});
  KernelArgs three_args{self.evalue(), three.evalue(), out.evalue(), EValue()};
  expect_rejected("aten::index.Tensor_out", three_args, Error::kInvalidArgument,
                  "argument 'indices' has 3 entries, more than the 2 dimensions of 'self'");
  TestTensor flag(ScalarType::kBool, {}, {1});
  IndexListArg scalar_mask({&flag});
  KernelArgs scalar_mask_args{self.evalue(), scalar_mask.evalue(), out.evalue(), EValue()};
  expect_rejected("aten::index.Tensor_out", scalar_mask_args, Error::kInvalidArgument,
                  "argument 'indices' has a 0-d mask at position 0, which is not supported");
  IndexListArg one({&good});
  KernelArgs out_args{self.evalue(), one.evalue(), int_out.evalue(), EValue()};
  expect_rejected("aten::index.Tensor_out", out_args, Error::kInvalidType,
                  "argument 'out' has dtype int32");
  // A value out of range only shows at run time: the reference's error.
  IndexListArg beyond({&far});
  EXPECT_TRUE(expect_same_as_reference("aten::index.Tensor_out", ScalarType::kFloat, {2, 4},
                                       [&](EValue o) {
                                         return std::vector<EValue>{self.evalue(),
                                                                    beyond.evalue(), o};
                                       }));
}

TEST(DenseGatherTest, GatherMatchesTheReference) {
  struct Case {
    int64_t dim;
    std::vector<SizesType> index;
  };
  const Case cases[] = {{0, {2, 3, 5}}, {1, {3, 6, 2}}, {-1, {3, 4, 7}}, {2, {1, 1, 1}},
                        {0, {0, 4, 5}}};
  for (ScalarType dtype : {ScalarType::kFloat, ScalarType::kLong, ScalarType::kBool,
                           ScalarType::kHalf}) {
    SCOPED_TRACE(to_string(dtype));
    Input in(dtype, {3, 4, 5});
    for (const Case& c : cases) {
      SCOPED_TRACE(c.dim);
      const SizesType limit = in.sizes[static_cast<size_t>((c.dim + 3) % 3)];
      std::vector<double> positions(static_cast<size_t>(count(c.index)));
      for (size_t i = 0; i < positions.size(); ++i) positions[i] = static_cast<double>((i * 7) % limit);
      TestTensor index(ScalarType::kLong, c.index, positions);
      EXPECT_TRUE(expect_same_as_reference("aten::gather.out", dtype, c.index, [&](EValue o) {
        return std::vector<EValue>{in.self.evalue(), EValue(c.dim), index.evalue(), EValue(false),
                                   o};
      }));
    }
    // A value out of range, and an index larger than self outside `dim`:
    // both evals fail with the reference's message.
    TestTensor far(ScalarType::kLong, {1, 2, 1}, {0, 4});
    EXPECT_TRUE(expect_same_as_reference("aten::gather.out", dtype, {1, 2, 1}, [&](EValue o) {
      return std::vector<EValue>{in.self.evalue(), EValue(int64_t{1}), far.evalue(),
                                 EValue(false), o};
    }));
    TestTensor wide(ScalarType::kLong, {1, 1, 6});
    EXPECT_TRUE(expect_same_as_reference("aten::gather.out", dtype, {1, 1, 6}, [&](EValue o) {
      return std::vector<EValue>{in.self.evalue(), EValue(int64_t{0}), wide.evalue(),
                                 EValue(false), o};
    }));
  }
}

}  // namespace
}  // namespace torchlight::portable
