// aten::convolution.out (optimized): values against a double reference over
// kernel sizes, strides, padding, dilation, batches, bias and both layouts,
// at 1 and 2 threads; calls it does not speed up give exactly the portable
// kernel's result, and errors are worded as the portable kernel's.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/conv/conv2d.h"
#include "kernels/optimized/conv/winograd_f2x3.h"
#include "kernels/optimized/gemm/owned_workspace.h"
#include "kernels/optimized/optimized_ops.h"
#include "kernels/optimized/optimized_kernels.h"
#include "kernels/portable/portable_ops.h"
#include "kernels/portable/util/depthwise_conv.h"
#include "kernels/portable/test/list_args.h"
#include "kernels/portable/test/test_tensor.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight::optimized {
namespace {

using ::torchlight::testing::ErrorIs;

using portable::kernel_test::dim_order;
using portable::kernel_test::IntListArg;
using portable::kernel_test::KernelArgs;
using portable::kernel_test::Layout;
using portable::kernel_test::random_float_values;
using portable::kernel_test::run_kernel;
using portable::kernel_test::TestTensor;

constexpr ScalarType kF32 = ScalarType::kFloat;

struct Case {
  int64_t n, c, h, w, cout, kh, kw;
  std::vector<int64_t> stride, padding, dilation;
};

// Sizes through every path: pointwise (no unfolding), strided 1x1, 3x3 with
// padding, a 7x7 stride-2 stem, dilation, per-dimension lists, and output
// widths that are not multiples of any vector width.
const Case kCases[] = {
    {1, 3, 7, 9, 5, 3, 3, {1}, {1}, {1}},
    {2, 4, 8, 8, 6, 1, 1, {1}, {0}, {1}},
    {2, 8, 5, 6, 16, 1, 1, {2}, {0}, {1}},
    {1, 3, 11, 10, 4, 7, 7, {2}, {3}, {1}},
    {1, 5, 9, 9, 3, 3, 3, {2}, {1}, {1}},
    {1, 2, 10, 10, 3, 3, 3, {1}, {2}, {2}},
    {1, 3, 6, 7, 2, 1, 3, {1, 2}, {0, 1}, {1}},
    {3, 17, 13, 5, 33, 3, 2, {1}, {1, 0}, {2, 1}},
    {1, 1, 1, 1, 1, 1, 1, {1}, {0}, {1}},
};

int64_t pick(const std::vector<int64_t>& list, int d) { return list[list.size() == 1 ? 0 : d]; }

// NCHW output of the convolution, in double, straight from the definition.
std::vector<double> reference(const Case& k, const std::vector<double>& in,
                              const std::vector<double>& w, const std::vector<double>* bias,
                              int64_t oh_size, int64_t ow_size) {
  std::vector<double> out;
  for (int64_t n = 0; n < k.n; ++n) {
    for (int64_t o = 0; o < k.cout; ++o) {
      for (int64_t oh = 0; oh < oh_size; ++oh) {
        for (int64_t ow = 0; ow < ow_size; ++ow) {
          double acc = bias != nullptr ? (*bias)[o] : 0.0;
          for (int64_t c = 0; c < k.c; ++c) {
            for (int64_t i = 0; i < k.kh; ++i) {
              for (int64_t j = 0; j < k.kw; ++j) {
                const int64_t ih = oh * pick(k.stride, 0) - pick(k.padding, 0) + i * pick(k.dilation, 0);
                const int64_t iw = ow * pick(k.stride, 1) - pick(k.padding, 1) + j * pick(k.dilation, 1);
                if (ih < 0 || ih >= k.h || iw < 0 || iw >= k.w) continue;
                acc += w[((o * k.c + c) * k.kh + i) * k.kw + j] * in[((n * k.c + c) * k.h + ih) * k.w + iw];
              }
            }
          }
          out.push_back(acc);
        }
      }
    }
  }
  return out;
}

// Logical NCHW (or OIHW) values as `layout` stores them: NHWC (OHWI) when
// channels_last, else unchanged; as float.
std::vector<float> laid_out(const std::vector<double>& nchw, int64_t n, int64_t c, int64_t h,
                            int64_t w, bool channels_last) {
  std::vector<float> out(nchw.size());
  for (int64_t i = 0; i < n; ++i)
    for (int64_t j = 0; j < c; ++j)
      for (int64_t y = 0; y < h; ++y)
        for (int64_t x = 0; x < w; ++x) {
          const int64_t at = channels_last ? ((i * h + y) * w + x) * c + j : ((i * c + j) * h + y) * w + x;
          out[at] = static_cast<float>(nchw[((i * c + j) * h + y) * w + x]);
        }
  return out;
}

struct ConvCall {
  std::vector<int64_t> stride = {1};
  std::vector<int64_t> padding = {0};
  std::vector<int64_t> dilation = {1};
  bool transposed = false;
  int64_t groups = 1;
};

Status convolution(KernelFunction fn, TestTensor& input, TestTensor& weight, TestTensor* bias,
                   const ConvCall& c, TestTensor& out) {
  IntListArg stride(c.stride);
  IntListArg padding(c.padding);
  IntListArg dilation(c.dilation);
  IntListArg output_padding({0});
  KernelArgs args{input.evalue(),          weight.evalue(),
                  bias != nullptr ? bias->evalue() : EValue(),
                  stride.evalue(),         padding.evalue(),
                  dilation.evalue(),       EValue(c.transposed),
                  output_padding.evalue(), EValue(c.groups),
                  out.evalue(),            EValue()};
  return run_kernel(fn, "aten::convolution.out", args);
}

class OptimizedConvolutionTest : public ::testing::TestWithParam<size_t> {
 protected:
  void SetUp() override { threadpool::set_num_threads(GetParam()); }
  void TearDown() override { threadpool::set_num_threads(0); }
};

TEST_P(OptimizedConvolutionTest, MatchesTheDefinitionInBothLayouts) {
  for (const Case& k : kCases) {
    const int64_t oh = conv2d_output_size(k.h, k.kh, pick(k.stride, 0), pick(k.padding, 0),
                                          pick(k.dilation, 0));
    const int64_t ow = conv2d_output_size(k.w, k.kw, pick(k.stride, 1), pick(k.padding, 1),
                                          pick(k.dilation, 1));
    ASSERT_GT(oh * ow, 0);
    const std::vector<double> in = random_float_values(k.n * k.c * k.h * k.w, 1);
    const std::vector<double> w = random_float_values(k.cout * k.c * k.kh * k.kw, 2);
    const std::vector<double> b = random_float_values(k.cout, 3);
    for (bool channels_last : {false, true}) {
      for (bool with_bias : {false, true}) {
        SCOPED_TRACE(::testing::Message() << "case " << (&k - kCases) << ", channels_last "
                                          << channels_last << ", bias " << with_bias);
        const Layout layout = channels_last ? dim_order({0, 2, 3, 1}) : Layout{};
        TestTensor input(kF32, {SizesType(k.n), SizesType(k.c), SizesType(k.h), SizesType(k.w)}, in,
                         layout);
        TestTensor weight(kF32, {SizesType(k.cout), SizesType(k.c), SizesType(k.kh), SizesType(k.kw)},
                          w, layout);
        TestTensor bias(kF32, {SizesType(k.cout)}, b);
        TestTensor out(kF32, {SizesType(k.n), SizesType(k.cout), SizesType(oh), SizesType(ow)}, {},
                       layout);
        ConvCall call;
        call.stride = k.stride;
        call.padding = k.padding;
        call.dilation = k.dilation;
        ASSERT_TRUE(convolution(&convolution_out, input, weight, with_bias ? &bias : nullptr, call, out).ok());
        const std::vector<double> want = reference(k, in, w, with_bias ? &b : nullptr, oh, ow);
        const std::vector<double> got = out.values();
        ASSERT_EQ(got.size(), want.size());
        const double tolerance = 1e-5 * std::sqrt(static_cast<double>(k.c * k.kh * k.kw));
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_NEAR(got[i], want[i], tolerance * std::fmax(1.0, std::fabs(want[i]))) << "element " << i;
        }
      }
    }
  }
}

// conv2d() itself with a fused clamp (as XNNPACK's nodes carry one): NHWC
// in and out, OHWI weights, against the reference clamped. The larger
// images have enough output pixels for NHWC's per-thread blocks (whole and
// partial ones, two images).
TEST_P(OptimizedConvolutionTest, Conv2dClampsItsOutputInBothLayouts) {
  for (const Case& k : {Case{2, 5, 6, 7, 9, 3, 3, {1}, {1}, {1}},
                        Case{1, 8, 48, 48, 6, 3, 3, {1}, {1}, {1}},
                        Case{2, 5, 50, 45, 7, 3, 3, {1}, {1}, {1}}}) {
    SCOPED_TRACE(::testing::Message() << k.h << "x" << k.w);
    const int64_t oh = k.h;
    const int64_t ow = k.w;
    const std::vector<double> in = random_float_values(k.n * k.c * k.h * k.w, 6);
    const std::vector<double> w = random_float_values(k.cout * k.c * k.kh * k.kw, 7);
    const std::vector<double> b = random_float_values(k.cout, 8);
    const std::vector<double> want = reference(k, in, w, &b, oh, ow);  // NCHW
    const double bound = 1e-5 * std::sqrt(static_cast<double>(k.c * 9));
    for (ConvLayout layout : {ConvLayout::kNchw, ConvLayout::kNhwc}) {
      const bool nhwc = layout == ConvLayout::kNhwc;
      std::vector<float> input = laid_out(in, k.n, k.c, k.h, k.w, nhwc);
      std::vector<float> weight = laid_out(w, k.cout, k.c, k.kh, k.kw, nhwc);
      std::vector<float> bias(b.begin(), b.end());
      std::vector<float> output(want.size());
      Conv2dProblem p;
      p.geometry = {k.n, k.c, k.h, k.w, k.cout, k.kh, k.kw, 1, 1, 1, 1, 1, 1, oh, ow};
      p.layout = layout;
      std::vector<float> columns(conv2d_columns_floats(p.geometry));
      OwnedGemmWorkspace workspace;
      p.input = input.data();
      p.weight = weight.data();
      p.bias = bias.data();
      p.output = output.data();
      p.columns = columns.data();
      p.workspace = workspace.get();
      p.output_min = 0.0f;
      p.output_max = 0.5f;
      ASSERT_TRUE(conv2d(p).ok());
      for (int64_t n = 0; n < k.n; ++n)
        for (int64_t o = 0; o < k.cout; ++o)
          for (int64_t y = 0; y < oh; ++y)
            for (int64_t x = 0; x < ow; ++x) {
              const double ref = std::fmin(std::fmax(want[((n * k.cout + o) * oh + y) * ow + x], 0.0), 0.5);
              const int64_t at = nhwc ? ((n * oh + y) * ow + x) * k.cout + o : ((n * k.cout + o) * oh + y) * ow + x;
              ASSERT_NEAR(output[at], ref, bound) << "layout " << nhwc << " at " << at;
            }
    }
  }
}

// Winograd F(2x2, 3x3): NHWC / OHWI against the double reference, over odd
// output sizes (partial edge tiles), padding 0-2, channel counts that are
// not multiples of the 16-channel steps, batches, no bias, a clamp, and
// layers large enough for the tile-blocked path.
// Bound: 2e-7 per product summed (the transforms add, subtract and halve:
// no coefficient amplifies rounding).
TEST_P(OptimizedConvolutionTest, WinogradMatchesTheDefinition) {
  struct WinogradCase {
    int64_t n, c, h, w, cout, pad;
    bool bias, clamp;
  };
  for (const WinogradCase& t : {WinogradCase{1, 3, 5, 5, 4, 1, true, false},
                                WinogradCase{2, 17, 9, 7, 33, 1, true, true},
                                WinogradCase{1, 16, 8, 8, 16, 0, false, false},
                                WinogradCase{3, 5, 4, 11, 7, 2, true, false},
                                WinogradCase{1, 64, 14, 14, 32, 1, true, true},
                                // Enough tiles for the blocked path (a block per thread at
                                // least twice over), whole and partial blocks.
                                WinogradCase{1, 16, 46, 46, 16, 1, true, true},
                                WinogradCase{2, 20, 33, 30, 12, 1, true, false}}) {
    SCOPED_TRACE(::testing::Message() << "n " << t.n << " c " << t.c << " " << t.h << "x" << t.w
                                      << " cout " << t.cout << " pad " << t.pad);
    const Case k{t.n, t.c, t.h, t.w, t.cout, 3, 3, {1}, {t.pad}, {1}};
    const int64_t oh = t.h + 2 * t.pad - 2;
    const int64_t ow = t.w + 2 * t.pad - 2;
    const std::vector<double> in = random_float_values(k.n * k.c * k.h * k.w, 11);
    const std::vector<double> w = random_float_values(k.cout * k.c * 9, 12);
    const std::vector<double> b = random_float_values(k.cout, 13);
    const std::vector<double> want = reference(k, in, w, t.bias ? &b : nullptr, oh, ow);
    // Each output sums c * 9 products of values in [-1, 1].
    const double bound = 2e-7 * static_cast<double>(t.c * 9 + 1);
    Conv2dProblem p;
    p.geometry = {k.n, k.c, k.h, k.w, k.cout, 3, 3, 1, 1, t.pad, t.pad, 1, 1, oh, ow};
    ASSERT_TRUE(winograd_f2x3_applies(p.geometry));
    p.layout = ConvLayout::kNhwc;
    const std::vector<float> input = laid_out(in, k.n, k.c, k.h, k.w, true);
    const std::vector<float> weight = laid_out(w, k.cout, k.c, 3, 3, true);
    std::vector<float> transformed(winograd_f2x3_filter_floats(k.c, k.cout));
    winograd_f2x3_transform_filter(weight.data(), k.c, k.cout, transformed.data());
    std::vector<float> scratch(winograd_f2x3_scratch_floats(p.geometry));
    std::vector<float> bias(b.begin(), b.end());
    std::vector<float> output(want.size(), NAN);
    OwnedGemmWorkspace workspace;
    p.input = input.data();
    p.bias = t.bias ? bias.data() : nullptr;
    p.output = output.data();
    p.workspace = workspace.get();
    if (t.clamp) p.output_min = -0.5f, p.output_max = 0.5f;
    ASSERT_TRUE(winograd_f2x3_conv2d(p, transformed.data(), scratch.data()).ok());
    for (int64_t n = 0; n < k.n; ++n)
      for (int64_t o = 0; o < k.cout; ++o)
        for (int64_t y = 0; y < oh; ++y)
          for (int64_t x = 0; x < ow; ++x) {
            double ref = want[((n * k.cout + o) * oh + y) * ow + x];
            if (t.clamp) ref = std::fmin(std::fmax(ref, -0.5), 0.5);
            const int64_t at = ((n * oh + y) * ow + x) * k.cout + o;
            ASSERT_NEAR(output[at], ref, bound) << "n " << n << " o " << o << " y " << y << " x " << x;
          }
  }
}

INSTANTIATE_TEST_SUITE_P(Threads, OptimizedConvolutionTest, ::testing::Values(size_t{1}, size_t{2}));

// Runs `call` through the optimized and the portable kernel on fresh outputs
// and expects bit-identical results (the call is the portable kernel's).
void expect_handed_to_portable(ScalarType dtype, const std::vector<SizesType>& in_sizes,
                               const std::vector<SizesType>& w_sizes,
                               const std::vector<SizesType>& out_sizes, const ConvCall& call,
                               const Layout& in_layout = {}, const Layout& w_layout = {}) {
  int64_t in_count = 1;
  int64_t w_count = 1;
  for (SizesType s : in_sizes) in_count *= s;
  for (SizesType s : w_sizes) w_count *= s;
  TestTensor input(dtype, in_sizes, random_float_values(in_count, 4), in_layout);
  TestTensor weight(dtype, w_sizes, random_float_values(w_count, 5), w_layout);
  TestTensor ours(dtype, out_sizes);
  TestTensor theirs(dtype, out_sizes);
  ASSERT_TRUE(convolution(&convolution_out, input, weight, nullptr, call, ours).ok());
  ASSERT_TRUE(convolution(&portable::convolution_out, input, weight, nullptr, call, theirs).ok());
  const std::vector<double> a = ours.values();
  const std::vector<double> b = theirs.values();
  ASSERT_EQ(a.size(), b.size());
  for (size_t i = 0; i < a.size(); ++i) EXPECT_EQ(a[i], b[i]) << "element " << i;
}

TEST(OptimizedConvolutionHandOff, GroupsTransposedOtherDtypesAndMixedLayoutsArePortables) {
  ConvCall grouped;
  grouped.groups = 2;
  expect_handed_to_portable(kF32, {1, 4, 5, 5}, {6, 2, 3, 3}, {1, 6, 3, 3}, grouped);
  ConvCall transposed;
  transposed.transposed = true;
  expect_handed_to_portable(kF32, {1, 3, 4, 4}, {3, 2, 3, 3}, {1, 2, 6, 6}, transposed);
  expect_handed_to_portable(ScalarType::kDouble, {1, 3, 5, 5}, {2, 3, 3, 3}, {1, 2, 3, 3}, {});
  expect_handed_to_portable(kF32, {1, 3, 6}, {2, 3, 3}, {1, 2, 4}, {});  // 1-D
  expect_handed_to_portable(kF32, {1, 3, 5, 5}, {2, 3, 3, 3}, {1, 2, 3, 3}, {},
                            dim_order({0, 2, 3, 1}), Layout{});
}

// A call the optimized kernel leaves to the portable one gets the portable
// prepare too: a depthwise convolution runs the portable stencil eval, and
// reserves no GEMM scratch.
TEST(OptimizedConvolutionHandOff, DepthwiseGetsThePortablePreparedEval) {
  const Kernel* optimized = nullptr;
  for (const Kernel& k : optimized_kernels()) {
    if (std::strcmp(k.name, "aten::convolution.out") == 0) optimized = &k;
  }
  ASSERT_NE(optimized, nullptr);
  TestTensor input(kF32, {1, 4, 6, 6}, random_float_values(144, 9));
  TestTensor weight(kF32, {4, 1, 3, 3}, random_float_values(36, 10));
  TestTensor out(kF32, {1, 4, 4, 4});
  IntListArg stride({1});
  IntListArg padding({0});
  IntListArg dilation({1});
  IntListArg output_padding({0});
  KernelArgs args{input.evalue(),   weight.evalue(),          EValue(),    stride.evalue(),
                  padding.evalue(), dilation.evalue(),        EValue(false), output_padding.evalue(),
                  EValue(int64_t{4}), out.evalue(),          EValue()};
  alignas(64) static uint8_t memory[1 << 16];
  MemoryAllocator allocator(memory, sizeof(memory));
  PreparedCall call;
  ASSERT_TRUE(prepare_kernel_call(*optimized, args.span(), &allocator, &call).ok());
  EXPECT_EQ(call.eval, (&portable::depthwise::depthwise_eval<false, portable::convolution_out>));
  EXPECT_EQ(call.scratch_bytes, 0u);
  ConvCall depthwise;
  depthwise.groups = 4;
  expect_handed_to_portable(kF32, {1, 4, 6, 6}, {4, 1, 3, 3}, {1, 4, 4, 4}, depthwise);
}

TEST(OptimizedConvolutionHandOff, ErrorsAreThePortableKernels) {
  TestTensor input(kF32, {1, 4, 5, 5});
  TestTensor weight(kF32, {2, 3, 3, 3});
  TestTensor out(kF32, {1, 2, 3, 3});
  EXPECT_THAT(convolution(&convolution_out, input, weight, nullptr, {}, out),
              ErrorIs(Error::kInvalidArgument, "argument 'input' of shape [1, 4, 5, 5] has 4 channels"));
  TestTensor small(kF32, {1, 3, 2, 2});
  TestTensor w3(kF32, {2, 3, 3, 3});
  EXPECT_THAT(convolution(&convolution_out, small, w3, nullptr, {}, out),
              ErrorIs(Error::kInvalidArgument, "larger than the padded size"));
  ConvCall zero_stride;
  zero_stride.stride = {0};
  TestTensor in3(kF32, {1, 3, 5, 5});
  EXPECT_THAT(convolution(&convolution_out, in3, w3, nullptr, zero_stride, out),
              ErrorIs(Error::kInvalidArgument, "argument 'stride'"));
}

}  // namespace
}  // namespace torchlight::optimized
