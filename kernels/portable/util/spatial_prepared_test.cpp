// The prepared paths of the spatial kernels: max_pool2d_with_indices,
// avg_pool2d, _adaptive_avg_pool2d (util/pool_prepared.h; float16 and
// bfloat16 too),
// batch norm with running statistics (_native_batch_norm_legit_no_training,
// _native_batch_norm_legit, native_batch_norm) and the depthwise convolution
// (util/depthwise_conv.h). For each, the eval prepare installs leaves every
// out exactly as the reference eval does (sizes and bytes) over dtypes,
// NCHW and channels-last, batched and unbatched inputs, padding, strides,
// dilation, ceil_mode, kernels larger than the input with padding, empty
// batches, NaN / ties / -inf, and input shapes that change after load; what
// the program fixes is rejected at prepare (load) naming the argument with
// the reference's reason.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "kernels/portable/portable_kernels.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/prepare_harness.h"
#include "kernels/portable/test/test_tensor.h"
#include "kernels/portable/util/out_resize.h"
#include "kernels/portable/util/pooling.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::portable {
namespace {

using kernel_test::dim_order;
using kernel_test::IntListArg;
using kernel_test::KernelArgs;
using kernel_test::Layout;
using kernel_test::portable_kernel_named;
using kernel_test::prepare_like_loader;
using kernel_test::Prepared;
using kernel_test::TestTensor;
using ::torchlight::testing::ErrorIs;

constexpr ScalarType kF32 = ScalarType::kFloat;
constexpr ScalarType kF64 = ScalarType::kDouble;
constexpr ScalarType kI64 = ScalarType::kLong;
constexpr ScalarType kF16 = ScalarType::kHalf;
constexpr ScalarType kBF16 = ScalarType::kBFloat16;

const std::vector<DimOrderType> kNchw = {0, 1, 2, 3};
const std::vector<DimOrderType> kLast = {0, 2, 3, 1};

Layout layout(const std::vector<DimOrderType>& order, bool dynamic = false) {
  Layout l;
  if (order == kLast) l.dim_order = order;  // Else contiguous, of any rank.
  if (dynamic) l.dynamism = TensorShapeDynamism::kDynamicBound;
  return l;
}

int64_t count(const std::vector<SizesType>& sizes) {
  int64_t n = 1;
  for (SizesType s : sizes) n *= s;
  return n;
}

// Random values in [-1, 1) with ties; floating dtypes also get NaN, -inf
// and -0.0; integer dtypes get small integers.
std::vector<double> values(ScalarType dtype, int64_t n, uint32_t seed) {
  std::vector<double> v = kernel_test::random_float_values(n, seed);
  for (int64_t i = 0; i < n; ++i) {
    if (is_integral(dtype)) v[i] = std::round(v[i] * 5);
    if (i % 7 == 3) v[i] = v[i - 1];  // A tie.
  }
  if (is_floating_point(dtype)) {
    for (int64_t i = 11; i < n; i += 37) v[i] = NAN;
    for (int64_t i = 5; i < n; i += 29) v[i] = -INFINITY;
    for (int64_t i = 2; i < n; i += 31) v[i] = -0.0;
  }
  return v;
}

bool same_bytes(TestTensor& a, TestTensor& b) {
  const Tensor x = a.tensor();
  const Tensor y = b.tensor();
  if (x.nbytes() != y.nbytes()) return false;
  return x.nbytes() == 0 || std::memcmp(x.const_data_ptr(), y.const_data_ptr(), x.nbytes()) == 0;
}

struct OutSpec {
  ScalarType dtype;
  std::vector<SizesType> sizes;  // The bound, for a dynamic out.
  std::vector<DimOrderType> order;
};

// The outs of one run, owned.
struct Outs {
  explicit Outs(const std::vector<OutSpec>& specs) {
    for (const OutSpec& s : specs) {
      tensors.push_back(std::make_unique<TestTensor>(s.dtype, s.sizes, std::vector<double>{},
                                                     layout(s.order, /*dynamic=*/true)));
    }
  }
  std::vector<std::unique_ptr<TestTensor>> tensors;
};

using MakeArgs = std::function<std::vector<EValue>(Outs& outs)>;

// Prepares `name` on make(outs), then runs what prepare installed and the
// reference eval, each into fresh outs; `before_run` may change the inputs'
// shapes between load and run. Both must succeed or fail alike and leave
// the same sizes and bytes. Returns whether prepare installed another eval.
bool expect_same_as_reference(const char* name, const std::vector<OutSpec>& specs,
                              const MakeArgs& make, const std::function<void()>& before_run = {}) {
  const Kernel& kernel = portable_kernel_named(name);
  EXPECT_NE(kernel.prepare, nullptr) << name;
  if (kernel.prepare == nullptr) return false;
  Outs fast_outs(specs);
  Outs reference_outs(specs);
  auto build = [&](Outs& outs) {
    std::vector<EValue> list = make(outs);
    list.push_back(EValue());
    return std::make_unique<KernelArgs>(std::move(list));
  };
  std::unique_ptr<KernelArgs> fast_args = build(fast_outs);
  std::unique_ptr<KernelArgs> reference_args = build(reference_outs);
  const Prepared p = prepare_like_loader(kernel, *fast_args);
  EXPECT_TRUE(p.status.ok()) << p.status.message();
  if (before_run) before_run();
  KernelContext fast_ctx(nullptr, nullptr, name);
  KernelContext reference_ctx(nullptr, nullptr, name);
  p.eval(fast_ctx, fast_args->span());
  kernel.eval(reference_ctx, reference_args->span());
  EXPECT_EQ(fast_ctx.failed(), reference_ctx.failed());
  EXPECT_EQ(std::string(fast_ctx.status().message()),
            std::string(reference_ctx.status().message()));
  for (size_t i = 0; i < specs.size(); ++i) {
    EXPECT_EQ(fast_outs.tensors[i]->sizes(), reference_outs.tensors[i]->sizes()) << "out " << i;
    EXPECT_TRUE(same_bytes(*fast_outs.tensors[i], *reference_outs.tensors[i])) << "out " << i;
  }
  return p.eval != kernel.eval;
}

// ---- Pooling ----

struct PoolCase {
  std::vector<SizesType> self;
  std::vector<int64_t> kernel, stride, padding, dilation;
  bool ceil_mode;
};

// Shapes the loops must get right: windows clipped on both sides, strides
// that skip, dilation, ceil_mode's partial last window, a kernel larger than
// the input (with padding), unbatched input, an empty batch, many channels
// (more than one channels-last block).
const PoolCase kPoolCases[] = {
    {{1, 3, 8, 8}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, false},
    {{2, 4, 7, 9}, {3, 3}, {2, 2}, {1, 1}, {1, 1}, true},
    {{1, 2, 6, 5}, {2, 3}, {1, 2}, {1, 1}, {2, 1}, false},
    {{1, 3, 9, 10}, {3, 2}, {3, 1}, {1, 0}, {2, 3}, true},
    {{1, 2, 2, 3}, {4, 5}, {1, 1}, {2, 2}, {1, 1}, false},  // Kernel larger than the input.
    {{1, 2, 5, 5}, {2}, {}, {0}, {1}, true},                  // One value; stride = kernel.
    {{0, 3, 6, 6}, {2, 2}, {2, 2}, {0, 0}, {1, 1}, false},  // Empty batch.
    {{1, 70, 5, 6}, {3, 3}, {1, 2}, {1, 1}, {1, 1}, false},  // Two channel blocks.
    {{3, 6, 7}, {3, 3}, {2, 1}, {1, 1}, {1, 1}, true},       // Unbatched.
};

std::vector<SizesType> pooled(const PoolCase& c, bool dilated) {
  std::vector<SizesType> sizes = c.self;
  const size_t first = sizes.size() - 2;
  for (size_t i = 0; i < 2; ++i) {
    auto at = [&](const std::vector<int64_t>& v, int64_t fallback) {
      return v.empty() ? fallback : v[v.size() == 1 ? 0 : i];
    };
    const int64_t k = at(c.kernel, 1);
    const int64_t s = at(c.stride, k);
    const int64_t p = at(c.padding, 0);
    const int64_t d = dilated ? at(c.dilation, 1) : 1;
    sizes[first + i] = static_cast<SizesType>(
        pooling_output_size(c.self[first + i], k, p, s, d, c.ceil_mode));
  }
  return sizes;
}

TEST(SpatialPreparedTest, MaxPoolMatchesReference) {
  for (ScalarType dtype : {kF32, kF64, kF16, kBF16, ScalarType::kInt, kI64}) {
    for (const auto& order : {kNchw, kLast}) {
      for (const PoolCase& c : kPoolCases) {
        if (order == kLast && c.self.size() != 4) continue;
        TestTensor self(dtype, c.self, values(dtype, count(c.self), 7), layout(order));
        IntListArg k(c.kernel), s(c.stride), p(c.padding), d(c.dilation);
        const std::vector<SizesType> out_sizes = pooled(c, true);
        const bool fast = expect_same_as_reference(
            "aten::max_pool2d_with_indices.out", {{dtype, out_sizes, order}, {kI64, out_sizes, order}},
            [&](Outs& o) {
              return std::vector<EValue>{self.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                         d.evalue(), EValue(c.ceil_mode),
                                         o.tensors[0]->evalue(), o.tensors[1]->evalue()};
            });
        EXPECT_TRUE(fast) << to_string(dtype);
      }
    }
  }
}

TEST(SpatialPreparedTest, MaxPoolFirstMaximumAndLastNan) {
  // Ties keep the first maximum; NaN wins, the last one of a window; a
  // window of negatives (and -inf) keeps its maximum, not the start value.
  for (ScalarType dtype : {kF32, kF16, kBF16}) {
    SCOPED_TRACE(to_string(dtype));
    TestTensor self(dtype, {1, 1, 2, 6}, {3, 3, NAN, 1, -INFINITY, -2, 3, 2, 5, NAN, -3, -1});
    IntListArg k({2, 2}), s({2, 2}), p({0}), d({1});
    EXPECT_TRUE(expect_same_as_reference(
        "aten::max_pool2d_with_indices.out",
        {{dtype, {1, 1, 1, 3}, {}}, {kI64, {1, 1, 1, 3}, {}}}, [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), k.evalue(),    s.evalue(),
                                     p.evalue(),    d.evalue(),    EValue(false),
                                     o.tensors[0]->evalue(), o.tensors[1]->evalue()};
        }));
  }
}

TEST(SpatialPreparedTest, AvgPoolMatchesReference) {
  for (ScalarType dtype : {kF32, kF64, kF16, kBF16}) {
    for (const auto& order : {kNchw, kLast}) {
      for (const PoolCase& c : kPoolCases) {
        if (order == kLast && c.self.size() != 4) continue;
        // avg_pool takes padding up to half the kernel and no dilation.
        for (bool include_pad : {false, true}) {
          for (int64_t divisor : {int64_t{0}, int64_t{-3}}) {
            TestTensor self(dtype, c.self, values(dtype, count(c.self), 11), layout(order));
            IntListArg k(c.kernel), s(c.stride), p(c.padding);
            const std::vector<SizesType> out_sizes = pooled(c, false);
            const bool fast = expect_same_as_reference(
                "aten::avg_pool2d.out", {{dtype, out_sizes, order}}, [&](Outs& o) {
                  return std::vector<EValue>{self.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                             EValue(c.ceil_mode), EValue(include_pad),
                                             divisor == 0 ? EValue() : EValue(divisor),
                                             o.tensors[0]->evalue()};
                });
            EXPECT_TRUE(fast);
          }
        }
      }
    }
  }
}

TEST(SpatialPreparedTest, AdaptiveAvgPoolMatchesReference) {
  const std::vector<std::vector<SizesType>> inputs = {
      {2, 5, 7, 7}, {1, 70, 4, 6}, {1, 3, 5, 3}, {0, 3, 4, 4}, {3, 9, 11}};
  const std::vector<std::vector<int64_t>> outputs = {{1, 1}, {3, 2}, {7, 5}, {2, 4}};
  for (ScalarType dtype : {kF32, kF64, kF16, kBF16}) {
    for (const auto& order : {kNchw, kLast}) {
      for (const auto& in_sizes : inputs) {
        if (order == kLast && in_sizes.size() != 4) continue;
        for (const auto& output_size : outputs) {
          TestTensor self(dtype, in_sizes, values(dtype, count(in_sizes), 3), layout(order));
          IntListArg size(output_size);
          std::vector<SizesType> out_sizes = in_sizes;
          out_sizes[out_sizes.size() - 2] = static_cast<SizesType>(output_size[0]);
          out_sizes[out_sizes.size() - 1] = static_cast<SizesType>(output_size[1]);
          const bool fast = expect_same_as_reference(
              "aten::_adaptive_avg_pool2d.out", {{dtype, out_sizes, order}}, [&](Outs& o) {
                return std::vector<EValue>{self.evalue(), size.evalue(), o.tensors[0]->evalue()};
              });
          EXPECT_TRUE(fast);
        }
      }
    }
  }
}

TEST(SpatialPreparedTest, PoolingFollowsAnInputShapeThatChangesAfterLoad) {
  // Prepared on [1, 3, 10, 10]; run on [1, 3, 6, 7], then on a shape whose
  // kernel no longer fits, which the reference reports.
  for (const std::vector<SizesType>& run_sizes :
       std::vector<std::vector<SizesType>>{{1, 3, 6, 7}, {1, 3, 2, 2}}) {
    TestTensor self(kF32, {1, 3, 10, 10}, values(kF32, 300, 5), layout({}, /*dynamic=*/true));
    IntListArg k({5, 5}), s({1, 1}), p({1, 1}), d({1, 1});
    expect_same_as_reference(
        "aten::max_pool2d_with_indices.out",
        {{kF32, {1, 3, 8, 8}, {}}, {kI64, {1, 3, 8, 8}, {}}},
        [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                     d.evalue(), EValue(false), o.tensors[0]->evalue(),
                                     o.tensors[1]->evalue()};
        },
        [&] { ASSERT_TRUE(resize_tensor({self.tensor(), "self"}, {run_sizes.data(), run_sizes.size()}).ok()); });
  }
}

// An int[] whose items a test can change after load, as when an earlier
// instruction computes them.
struct MutableIntList {
  explicit MutableIntList(std::vector<int64_t> values) {
    for (int64_t v : values) items.emplace_back(v);
    for (EValue& e : items) pointers.push_back(&e);
    scratch.resize(items.size());
  }
  EValue evalue() {
    return EValue(BoxedList<int64_t>(pointers.data(), scratch.data(), items.size()));
  }
  std::vector<EValue> items;
  std::vector<EValue*> pointers;
  std::vector<int64_t> scratch;
};

TEST(SpatialPreparedTest, ListsChangedAfterLoadGoToTheReference) {
  // A stride of 0, a padding beyond half the kernel: the prepared evals
  // hand the call to the reference, which reports it.
  for (int64_t bad : {int64_t{0}, int64_t{-1}}) {
    TestTensor self(kF32, {1, 2, 6, 6}, values(kF32, 72, 3));
    MutableIntList k({3, 3}), s({2, 2}), p({1, 1}), d({1, 1});
    expect_same_as_reference(
        "aten::max_pool2d_with_indices.out", {{kF32, {1, 2, 3, 3}, {}}, {kI64, {1, 2, 3, 3}, {}}},
        [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), k.evalue(), s.evalue(), p.evalue(),
                                     d.evalue(), EValue(false), o.tensors[0]->evalue(),
                                     o.tensors[1]->evalue()};
        },
        [&] { s.items[1] = EValue(bad); });
    MutableIntList ak({3, 3}), as({2, 2}), ap({1, 1});
    expect_same_as_reference(
        "aten::avg_pool2d.out", {{kF32, {1, 2, 3, 3}, {}}},
        [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), ak.evalue(), as.evalue(), ap.evalue(),
                                     EValue(false), EValue(true), EValue(), o.tensors[0]->evalue()};
        },
        [&] { ap.items[0] = EValue(bad == 0 ? int64_t{2} : bad); });
    TestTensor weight(kF32, {2, 1, 3, 3}, kernel_test::random_float_values(18, 5));
    MutableIntList cs({1, 1}), cp({1, 1}), cd({1, 1});
    IntListArg output_padding({0});
    expect_same_as_reference(
        "aten::convolution.out", {{kF32, {1, 2, 6, 6}, {}}},
        [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), weight.evalue(), EValue(), cs.evalue(),
                                     cp.evalue(), cd.evalue(), EValue(false),
                                     output_padding.evalue(), EValue(int64_t{2}),
                                     o.tensors[0]->evalue()};
        },
        [&] { cd.items[0] = EValue(bad); });
    MutableIntList size({2, 2});
    expect_same_as_reference(
        "aten::_adaptive_avg_pool2d.out", {{kF32, {1, 2, 2, 2}, {}}},
        [&](Outs& o) {
          return std::vector<EValue>{self.evalue(), size.evalue(), o.tensors[0]->evalue()};
        },
        [&] { size.items[1] = EValue(bad - 1); });
  }
}

// The outs and lists of one pooling call, for the rejection tests.
Status prepare_max_pool(TestTensor& self, std::vector<int64_t> kernel,
                        std::vector<int64_t> stride, std::vector<int64_t> padding,
                        std::vector<int64_t> dilation, ScalarType indices_type = kI64) {
  IntListArg k(kernel), s(stride), p(padding), d(dilation);
  TestTensor out(self.tensor().scalar_type(), {1, 1, 1, 1});
  TestTensor indices(indices_type, {1, 1, 1, 1});
  KernelArgs args{self.evalue(), k.evalue(),   s.evalue(),       p.evalue(), d.evalue(),
                  EValue(false), out.evalue(), indices.evalue(), EValue()};
  return prepare_like_loader(portable_kernel_named("aten::max_pool2d_with_indices.out"), args)
      .status;
}

TEST(SpatialPreparedTest, PoolingRejectsAtLoadWhatTheProgramFixes) {
  TestTensor self(kF32, {1, 2, 6, 6});
  EXPECT_THAT(prepare_max_pool(self, {3, 3}, {2, 2}, {2, 2}, {1, 1}),
              ErrorIs(Error::kInvalidArgument, "argument 'padding' has 2 at dimension 0"));
  EXPECT_THAT(prepare_max_pool(self, {3, 0}, {2, 2}, {1, 1}, {1, 1}),
              ErrorIs(Error::kInvalidArgument, "argument 'kernel_size' has 0 at dimension 1"));
  EXPECT_THAT(prepare_max_pool(self, {3, 3}, {2, 2, 2}, {1, 1}, {1, 1}),
              ErrorIs(Error::kInvalidArgument, "stride"));
  EXPECT_THAT(prepare_max_pool(self, {3, 3}, {2, 2}, {1, 1}, {0, 1}),
              ErrorIs(Error::kInvalidArgument, "argument 'dilation' has 0 at dimension 0"));
  EXPECT_THAT(prepare_max_pool(self, {3, 3}, {2, 2}, {1, 1}, {1, 1}, ScalarType::kInt),
              ErrorIs(Error::kInvalidType, "argument 'indices' has dtype int32, expected int64"));
  EXPECT_THAT(prepare_max_pool(self, {7, 7}, {1, 1}, {0, 0}, {2, 2}),
              ErrorIs(Error::kInvalidArgument, "argument 'kernel_size' (7 at dimension 0"));
  TestTensor flags(ScalarType::kBool, {1, 2, 6, 6});
  EXPECT_THAT(prepare_max_pool(flags, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
              ErrorIs(Error::kInvalidType, "argument 'self' has dtype bool"));
  TestTensor flat(kF32, {6, 6});
  EXPECT_THAT(prepare_max_pool(flat, {3, 3}, {2, 2}, {1, 1}, {1, 1}),
              ErrorIs(Error::kInvalidArgument, "argument 'self' has shape [6, 6]"));

  TestTensor ints(ScalarType::kInt, {1, 2, 6, 6});
  IntListArg k({2, 2}), s({2, 2}), p({0, 0});
  TestTensor avg_out(ScalarType::kInt, {1, 2, 3, 3});
  KernelArgs avg{ints.evalue(), k.evalue(),   s.evalue(),       p.evalue(), EValue(false),
                 EValue(true),  EValue(int64_t{0}), avg_out.evalue(), EValue()};
  const Prepared a = prepare_like_loader(portable_kernel_named("aten::avg_pool2d.out"), avg);
  EXPECT_THAT(a.status, ErrorIs(Error::kInvalidArgument,
                                "argument 'divisor_override' is 0, expected a non-zero divisor"));
  avg[6] = EValue();
  const Prepared b = prepare_like_loader(portable_kernel_named("aten::avg_pool2d.out"), avg);
  EXPECT_THAT(b.status, ErrorIs(Error::kInvalidType, "argument 'self' has dtype int32"));

  IntListArg bad_size({2, 2, 2});
  TestTensor adaptive_out(kF32, {1, 2, 2, 2});
  KernelArgs adaptive{self.evalue(), bad_size.evalue(), adaptive_out.evalue(), EValue()};
  const Prepared c =
      prepare_like_loader(portable_kernel_named("aten::_adaptive_avg_pool2d.out"), adaptive);
  EXPECT_THAT(c.status,
              ErrorIs(Error::kInvalidArgument, "argument 'output_size' has 3 values, expected 2"));
}

// ---- Batch norm with running statistics ----

// The three variants that take running statistics, with the arguments in
// their schema order; `training` only where the variant has it.
struct BatchNormVariant {
  const char* name;
  bool has_training;
  bool optional_stats;  // Tensor? running_mean / running_var.
};
constexpr BatchNormVariant kBatchNormVariants[] = {
    {"aten::_native_batch_norm_legit_no_training.out", false, false},
    {"aten::_native_batch_norm_legit.out", true, false},
    {"aten::native_batch_norm.out", true, true},
};

std::vector<EValue> batch_norm_args(const BatchNormVariant& v, EValue input, EValue weight,
                                    EValue bias, EValue mean, EValue var, bool training,
                                    Outs& o) {
  std::vector<EValue> args = {input, weight, bias, mean, var};
  if (v.has_training) args.push_back(EValue(training));
  for (EValue e : {EValue(0.1), EValue(1e-5), o.tensors[0]->evalue(), o.tensors[1]->evalue(),
                   o.tensors[2]->evalue()}) {
    args.push_back(e);
  }
  return args;
}

TEST(SpatialPreparedTest, BatchNormWithRunningStatsMatchesReference) {
  const std::vector<std::vector<SizesType>> inputs = {
      {2, 3, 4, 5}, {1, 70, 3, 3}, {4, 6}, {2, 3, 7}, {0, 3, 2, 2}, {1, 2, 2, 3, 2}};
  for (const BatchNormVariant& v : kBatchNormVariants) {
    for (ScalarType dtype : {kF32, kF64}) {
      for (const auto& order : {kNchw, kLast}) {
        for (const auto& in_sizes : inputs) {
          if (order == kLast && in_sizes.size() != 4) continue;
          for (bool affine : {false, true}) {
            const SizesType c = in_sizes[1];
            SCOPED_TRACE(std::string(v.name) + ::testing::PrintToString(in_sizes) +
                         to_string(dtype) + (order == kLast ? " last" : "") +
                         (affine ? " affine" : ""));
            TestTensor input(dtype, in_sizes, values(dtype, count(in_sizes), 13), layout(order));
            std::vector<double> var = kernel_test::random_float_values(c, 17);
            for (double& x : var) x = std::fabs(x) + 0.1;
            TestTensor weight(dtype, {c}, kernel_test::random_float_values(c, 19));
            TestTensor bias(dtype, {c}, kernel_test::random_float_values(c, 23));
            TestTensor mean(dtype, {c}, kernel_test::random_float_values(c, 29));
            TestTensor variance(dtype, {c}, var);
            const bool fast = expect_same_as_reference(
                v.name, {{dtype, in_sizes, order}, {dtype, {3}, {}}, {dtype, {3}, {}}},
                [&](Outs& o) {
                  return batch_norm_args(v, input.evalue(), affine ? weight.evalue() : EValue(),
                                         affine ? bias.evalue() : EValue(), mean.evalue(),
                                         variance.evalue(), /*training=*/false, o);
                });
            EXPECT_TRUE(fast);
          }
        }
      }
    }
  }
}

// What the prepared loops leave to the reference: float16 input with float32 parameters, a permuted layout, and
// an input whose channels no longer match the parameters at run time.
TEST(SpatialPreparedTest, BatchNormOtherCallsKeepTheReference) {
  for (const BatchNormVariant& v : kBatchNormVariants) {
    SCOPED_TRACE(v.name);
    TestTensor weight(kF32, {3}, {0.5, -1, 2});
    TestTensor bias(kF32, {3}, {0.25, 0, -1});
    TestTensor mean(kF32, {3}, {0.1, -0.2, 0.3});
    TestTensor var(kF32, {3}, {1, 0.5, 2});
    const std::vector<SizesType> sizes = {2, 3, 2, 2};
    TestTensor half_input(ScalarType::kHalf, sizes, values(ScalarType::kHalf, count(sizes), 3));
    EXPECT_FALSE(expect_same_as_reference(
        v.name, {{ScalarType::kHalf, sizes, {}}, {kF32, {3}, {}}, {kF32, {3}, {}}}, [&](Outs& o) {
          return batch_norm_args(v, half_input.evalue(), weight.evalue(), bias.evalue(),
                                 mean.evalue(), var.evalue(), false, o);
        }));
    TestTensor permuted(kF32, sizes, values(kF32, count(sizes), 5), dim_order({0, 2, 1, 3}));
    EXPECT_FALSE(expect_same_as_reference(
        v.name, {{kF32, sizes, {}}, {kF32, {3}, {}}, {kF32, {3}, {}}}, [&](Outs& o) {
          return batch_norm_args(v, permuted.evalue(), weight.evalue(), bias.evalue(),
                                 mean.evalue(), var.evalue(), false, o);
        }));
    // Prepared on 3 channels; the run's input has 2: the reference's error.
    TestTensor dynamic(kF32, sizes, values(kF32, count(sizes), 7), layout(kNchw, true));
    EXPECT_TRUE(expect_same_as_reference(
        v.name, {{kF32, sizes, {}}, {kF32, {3}, {}}, {kF32, {3}, {}}},
        [&](Outs& o) {
          return batch_norm_args(v, dynamic.evalue(), weight.evalue(), bias.evalue(),
                                 mean.evalue(), var.evalue(), false, o);
        },
        [&] {
          const SizesType smaller[] = {2, 2, 2, 2};
          ASSERT_TRUE(resize_tensor({dynamic.tensor(), "input"}, smaller).ok());
        }));
  }
}

// Batch statistics (training): _native_batch_norm_legit.out and
// native_batch_norm.out with running statistics (updated in place: each run
// gets its own, and they are compared too) or, for native_batch_norm.out
// and no_stats_out, without. save_mean, save_invstd, out and the running
// statistics are bit-identical to the reference's, also for one element per
// channel (an unbiased variance of inf/NaN) and a channel count a dynamic
// input changes after load (the reference's error).
TEST(SpatialPreparedTest, BatchNormWithBatchStatsMatchesReference) {
  const std::vector<std::vector<SizesType>> inputs = {
      {2, 3, 4, 5}, {1, 70, 3, 3}, {4, 6}, {2, 3, 7}, {1, 2, 2, 3, 2}, {1, 3, 1, 1}};
  const char* kNoStats = "aten::_native_batch_norm_legit.no_stats_out";
  for (const char* name : {"aten::_native_batch_norm_legit.out", "aten::native_batch_norm.out",
                           kNoStats}) {
    for (ScalarType dtype : {kF32, kF64}) {
      for (const auto& order : {kNchw, kLast}) {
        for (const auto& in_sizes : inputs) {
          if (order == kLast && in_sizes.size() != 4) continue;
          for (int with : {0, 1, 2, 3}) {  // Bit 0: weight and bias; bit 1: running statistics.
            const bool affine = (with & 1) != 0;
            const bool required = std::string(name) == "aten::_native_batch_norm_legit.out";
            const bool running = name != kNoStats && ((with & 2) != 0 || required);
            const SizesType c = in_sizes[1];
            SCOPED_TRACE(std::string(name) + ::testing::PrintToString(in_sizes) +
                         to_string(dtype) + (order == kLast ? " last" : "") +
                         (affine ? " affine" : "") + (running ? " running" : ""));
            TestTensor input(dtype, in_sizes, values(dtype, count(in_sizes), 13), layout(order));
            TestTensor weight(dtype, {c}, kernel_test::random_float_values(c, 19));
            TestTensor bias(dtype, {c}, kernel_test::random_float_values(c, 23));
            const std::vector<double> start_mean = kernel_test::random_float_values(c, 29);
            std::vector<double> start_var = kernel_test::random_float_values(c, 17);
            for (double& x : start_var) x = std::fabs(x) + 0.1;
            std::vector<OutSpec> specs = {{dtype, in_sizes, order}, {dtype, {c}, {}},
                                          {dtype, {c}, {}}};
            if (running) {  // Written in place: one pair per run, compared like outs.
              specs.push_back({dtype, {c}, {}});
              specs.push_back({dtype, {c}, {}});
            }
            const bool fast = expect_same_as_reference(name, specs, [&](Outs& o) {
              const EValue w = affine ? weight.evalue() : EValue();
              const EValue b = affine ? bias.evalue() : EValue();
              std::vector<EValue> args = {input.evalue(), w, b};
              if (name != kNoStats) {
                EValue m, v;
                if (running) {
                  for (SizesType i = 0; i < c; ++i) {
                    o.tensors[3]->set(i, start_mean[i]);
                    o.tensors[4]->set(i, start_var[i]);
                  }
                  m = o.tensors[3]->evalue();
                  v = o.tensors[4]->evalue();
                }
                args.push_back(m);
                args.push_back(v);
              }
              for (EValue e : {EValue(true), EValue(0.1), EValue(1e-5), o.tensors[0]->evalue(),
                               o.tensors[1]->evalue(), o.tensors[2]->evalue()}) {
                args.push_back(e);
              }
              return args;
            });
            EXPECT_TRUE(fast);
          }
        }
      }
    }
  }
  // Prepared on 3 channels; the run's input has 2: the reference's error.
  const std::vector<SizesType> sizes = {2, 3, 2, 2};
  TestTensor dynamic(kF32, sizes, values(kF32, count(sizes), 7), layout(kNchw, true));
  TestTensor weight(kF32, {3}, {0.5, -1, 2});
  EXPECT_TRUE(expect_same_as_reference(
      kNoStats, {{kF32, sizes, {}}, {kF32, {3}, {}}, {kF32, {3}, {}}},
      [&](Outs& o) {
        return std::vector<EValue>{dynamic.evalue(), weight.evalue(), EValue(), EValue(true),
                                   EValue(0.1), EValue(1e-5), o.tensors[0]->evalue(),
                                   o.tensors[1]->evalue(), o.tensors[2]->evalue()};
      },
      [&] {
        const SizesType smaller[] = {2, 2, 2, 2};
        ASSERT_TRUE(resize_tensor({dynamic.tensor(), "input"}, smaller).ok());
      }));
}

TEST(SpatialPreparedTest, BatchNormRejectsAtLoadWhatTheProgramFixes) {
  TestTensor input(kF32, {1, 3, 2, 2});
  TestTensor short_mean(kF32, {2});
  TestTensor mean(kF32, {3});
  TestTensor var(kF32, {3});
  for (const BatchNormVariant& v : kBatchNormVariants) {
    SCOPED_TRACE(v.name);
    const Kernel& k = portable_kernel_named(v.name);
    Outs outs({{kF32, {1, 3, 2, 2}, {}}, {kF32, {0}, {}}, {kF32, {0}, {}}});
    auto prepare = [&](std::vector<EValue> list) {
      list.push_back(EValue());
      KernelArgs args(std::move(list));
      return prepare_like_loader(k, args).status;
    };
    EXPECT_THAT(prepare(batch_norm_args(v, input.evalue(), EValue(), EValue(),
                                        short_mean.evalue(), var.evalue(), false, outs)),
                ErrorIs(Error::kInvalidArgument,
                        "argument 'running_mean' has shape [2], expected [3]"));
    Outs int_outs({{ScalarType::kInt, {1, 3, 2, 2}, {}}, {kF32, {0}, {}}, {kF32, {0}, {}}});
    EXPECT_THAT(prepare(batch_norm_args(v, input.evalue(), EValue(), EValue(), mean.evalue(),
                                        var.evalue(), false, int_outs)),
                ErrorIs(Error::kInvalidType, v.has_training ? "'out'" : "'out0'"));
    if (!v.optional_stats) continue;
    EXPECT_THAT(prepare(batch_norm_args(v, input.evalue(), EValue(), EValue(), EValue(),
                                        EValue(), false, outs)),
                ErrorIs(Error::kInvalidArgument,
                        "arguments 'running_mean' and 'running_var' are required when "
                        "'training' is false"));
  }
  // Batch statistics only: checked at load too.
  TestTensor short_weight(kF32, {2});
  Outs outs({{kF32, {1, 3, 2, 2}, {}}, {kF32, {3}, {}}, {kF32, {3}, {}}});
  KernelArgs no_stats{input.evalue(),        short_weight.evalue(),  EValue(),
                      EValue(true),          EValue(0.1),            EValue(1e-5),
                      outs.tensors[0]->evalue(), outs.tensors[1]->evalue(), outs.tensors[2]->evalue(),
                      EValue()};
  EXPECT_THAT(
      prepare_like_loader(portable_kernel_named("aten::_native_batch_norm_legit.no_stats_out"),
                          no_stats)
          .status,
      ErrorIs(Error::kInvalidArgument, "argument 'weight' has shape [2], expected [3]"));
}

// ---- Depthwise convolution ----

struct ConvCase {
  std::vector<SizesType> input;
  std::vector<SizesType> kernel;  // KH, KW.
  std::vector<int64_t> stride, padding, dilation;
};

const ConvCase kConvCases[] = {
    {{1, 8, 9, 9}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},
    {{2, 5, 10, 7}, {3, 3}, {2, 2}, {1, 1}, {1, 1}},
    {{1, 4, 6, 8}, {5, 3}, {1, 2}, {2, 1}, {1, 1}},
    {{1, 3, 9, 9}, {3, 3}, {1}, {2}, {2}},         // Dilated, one value per list.
    {{1, 3, 2, 2}, {5, 5}, {1, 1}, {2, 2}, {1, 1}},  // Kernel larger than the input.
    {{1, 70, 6, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},  // Two channel blocks.
    {{0, 4, 5, 5}, {3, 3}, {1, 1}, {1, 1}, {1, 1}},   // Empty batch.
    {{1, 2, 4, 300}, {1, 3}, {1, 1}, {0, 1}, {1, 1}},  // Rows longer than a block.
};

SizesType conv_size(SizesType in, SizesType k, int64_t s, int64_t p, int64_t d) {
  return static_cast<SizesType>((in + 2 * p - d * (k - 1) - 1) / s + 1);
}

// Channel multipliers 1 (one output channel per input channel) and 2 or 3
// (weight [C * M, 1, KH, KW]: output channel oc reads input channel oc / M).
// float16/bfloat16 accumulate in float and float64 in double, as the
// reference does.
TEST(SpatialPreparedTest, DepthwiseConvolutionMatchesReference) {
  for (ScalarType dtype : {kF32, kF64, kF16, kBF16}) {
    SCOPED_TRACE(to_string(dtype));
    for (const auto& order : {kNchw, kLast}) {
      for (const ConvCase& c : kConvCases) {
        for (int64_t multiplier : {1, 2, 3}) {
          for (bool with_bias : {false, true}) {
            const SizesType channels = c.input[1];
            const SizesType out_channels = static_cast<SizesType>(channels * multiplier);
            SCOPED_TRACE(::testing::PrintToString(c.input) + " x" + std::to_string(multiplier) +
                         (order == kLast ? " last" : ""));
            TestTensor input(dtype, c.input, values(dtype, count(c.input), 31), layout(order));
            const std::vector<SizesType> w_sizes = {out_channels, 1, c.kernel[0], c.kernel[1]};
            TestTensor weight(dtype, w_sizes, kernel_test::random_float_values(count(w_sizes), 37));
            TestTensor bias(dtype, {out_channels},
                            kernel_test::random_float_values(out_channels, 41));
            IntListArg s(c.stride), p(c.padding), d(c.dilation), output_padding({0});
            auto at = [](const std::vector<int64_t>& v, size_t i) {
              return v[v.size() == 1 ? 0 : i];
            };
            std::vector<SizesType> out_sizes = {c.input[0], out_channels};
            for (size_t i = 0; i < 2; ++i) {
              out_sizes.push_back(conv_size(c.input[2 + i], c.kernel[i], at(c.stride, i),
                                            at(c.padding, i), at(c.dilation, i)));
            }
            const bool fast = expect_same_as_reference(
                "aten::convolution.out", {{dtype, out_sizes, order}}, [&](Outs& o) {
                  return std::vector<EValue>{input.evalue(),
                                             weight.evalue(),
                                             with_bias ? bias.evalue() : EValue(),
                                             s.evalue(),
                                             p.evalue(),
                                             d.evalue(),
                                             EValue(false),
                                             output_padding.evalue(),
                                             EValue(int64_t{channels}),
                                             o.tensors[0]->evalue()};
                });
            EXPECT_TRUE(fast);
          }
        }
      }
    }
  }
}

TEST(SpatialPreparedTest, ConvolutionRejectsAtLoadWhatTheProgramFixes) {
  TestTensor input(kF32, {1, 4, 5, 5});
  TestTensor weight(kF32, {4, 1, 3, 3});
  TestTensor out(kF32, {1, 4, 5, 5});
  IntListArg s({0, 1}), p({1, 1}), d({1, 1}), output_padding({0});
  KernelArgs args{input.evalue(), weight.evalue(),         EValue(),          s.evalue(),
                  p.evalue(),     d.evalue(),              EValue(false),     output_padding.evalue(),
                  EValue(int64_t{4}), out.evalue(),        EValue()};
  const Kernel& k = portable_kernel_named("aten::convolution.out");
  EXPECT_THAT(prepare_like_loader(k, args).status,
              ErrorIs(Error::kInvalidArgument, "argument 'stride' has 0 at spatial dimension 0"));
  IntListArg good_stride({1, 1});
  args[3] = good_stride.evalue();
  args[8] = EValue(int64_t{3});
  EXPECT_THAT(prepare_like_loader(k, args).status, ErrorIs(Error::kInvalidArgument, "groups = 3"));
  args[8] = EValue(int64_t{4});
  EXPECT_TRUE(prepare_like_loader(k, args).status.ok());
}

TEST(SpatialPreparedTest, ConvolutionOutsideTheDepthwiseCaseKeepsTheReference) {
  // A dense (groups = 1) convolution: checked at load, reference eval kept.
  TestTensor input(kF32, {1, 4, 5, 5});
  TestTensor weight(kF32, {2, 4, 3, 3});
  TestTensor out(kF32, {1, 2, 5, 5});
  IntListArg s({1, 1}), p({1, 1}), d({1, 1}), output_padding({0});
  KernelArgs args{input.evalue(), weight.evalue(), EValue(),           s.evalue(),
                  p.evalue(),     d.evalue(),      EValue(false),      output_padding.evalue(),
                  EValue(int64_t{1}), out.evalue(), EValue()};
  const Kernel& k = portable_kernel_named("aten::convolution.out");
  const Prepared prepared = prepare_like_loader(k, args);
  EXPECT_TRUE(prepared.status.ok());
  EXPECT_EQ(prepared.eval, k.eval);
}

}  // namespace
}  // namespace torchlight::portable
