// The XNNPACK delegate with its float convolutions on conv2d between XNNPACK
// stages (stage_plan.h). Each payload runs split, and again with
// TORCHLIGHT_XNNPACK_CONV=xnnpack on XNNPACK alone (whose convolution
// xnnpack_nodes_test checks against a reference); the two agree within the
// rounding of two summation orders (1e-5 relative to the output's largest
// magnitude). A tracer shows which convolutions conv2d ran, so a split that
// silently stopped happening fails too. These run on the AVX2 GEMM where the
// CPU has it, whose routing sends most convolutions to conv2d; the AVX-512
// routing (large filters only) has tests of its own at the end.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"
#include "backends/xnnpack/stage_plan.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/gemm/gemm.h"
#include "runtime/core/event_tracer.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using Kind = fb::XNodeUnion;

using optimized::GemmIsa;

// The GEMM (and so the conv routing) on `isa` while alive, when the CPU has it.
class GemmIsaScope {
 public:
  explicit GemmIsaScope(GemmIsa isa) : forced_(optimized::set_gemm_isa(isa).ok()) {}
  ~GemmIsaScope() { optimized::reset_gemm_isa(); }
  bool forced() const { return forced_; }

 private:
  bool forced_;
};

class XnnpackStagedTest : public ::testing::Test {
 protected:
  // The AVX2 routing where this x86 CPU has AVX2; elsewhere the portable
  // GEMM's, which is the same rule.
  GemmIsaScope avx2_{GemmIsa::kAvx2};
};

TEST_F(XnnpackStagedTest, ResidualBlockRunsConvolutionsOnConv2d) {
  // x -> conv+relu -> conv -> add x -> relu: x crosses from the caller to
  // the first conv and the add; t1 goes conv to conv through the arena.
  // 16x16 outputs are 64 Winograd tiles, and 128 channels are enough:
  // both 3x3 convolutions use it.
  PayloadBuilder b;
  const uint32_t x = b.input({1, 16, 16, 128}, 0);
  const uint32_t t1 = b.internal({1, 16, 16, 128});
  const uint32_t t2 = b.internal({1, 16, 16, 128});
  const uint32_t y = b.output({1, 16, 16, 128}, 1);
  add_conv(b, {128, 128, 3, 1, 1, 1, true}, x, t1, 30);
  add_conv(b, {128, 128, 3, 1, 1}, t1, t2, 32);
  add_binary(b, Kind::XNNAdd, t2, x, y);
  b.clamp_last(0.0f, INFINITY);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 16, 16, 128}, random_values(16 * 16 * 128, 34));
  DelegateEventNames events;
  const auto split = run_all(payload, {{&in}, {&in}}, {{1, 16, 16, 128}}, false, &events);
  EXPECT_EQ(events.count_containing("conv2d Winograd #1"), 2u);
  EXPECT_EQ(events.count_containing("conv2d Winograd #2"), 2u);
  EXPECT_EQ(events.count_containing("conv2d"), 4u);
  EXPECT_GE(events.count_containing("Binary Elementwise"), 2u)
      << ::testing::PrintToString(events.names);
  DelegateEventNames alone_events;
  const auto alone = run_all(payload, {{&in}, {&in}}, {{1, 16, 16, 128}}, true, &alone_events);
  EXPECT_EQ(alone_events.count_containing("conv2d"), 0u);
  EXPECT_GE(alone_events.count_containing("Convolution"), 4u);
  expect_same_outputs(split, alone);
}

TEST_F(XnnpackStagedTest, GraphOutputReadByLaterStagesAndStridedConvolutions) {
  // conv (3x3 / 2) writes graph output 0, which a max pool and a 1x1 conv
  // then read; a dilated conv reads the pool too.
  PayloadBuilder b;
  const uint32_t x = b.input({2, 9, 9, 10}, 0);
  const uint32_t y0 = b.output({2, 5, 5, 64}, 1);
  const uint32_t pooled = b.internal({2, 4, 4, 64});
  const uint32_t y1 = b.output({2, 4, 4, 5}, 2);
  const uint32_t y2 = b.output({2, 2, 2, 6}, 3);
  add_conv(b, {10, 64, 3, 2, 1}, x, y0, 40);
  auto* pool = b.node<fb::_XNNPooling2DT>(Kind::XNNMaxPooling2d);
  pool->pooling_height = pool->pooling_width = 2;
  pool->stride_height = pool->stride_width = 1;
  pool->dilation_height = pool->dilation_width = 1;
  pool->input_id = y0, pool->output_id = pooled;
  add_conv(b, {64, 5, 1}, pooled, y1, 42);
  add_conv(b, {64, 6, 2, 1, 0, 2, true}, pooled, y2, 44);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({2, 9, 9, 10}, random_values(2 * 9 * 9 * 10, 46));
  const std::vector<std::vector<SizesType>> bounds = {{2, 5, 5, 64}, {2, 4, 4, 5}, {2, 2, 2, 6}};
  DelegateEventNames events;
  const auto split = run_all(payload, {{&in}}, bounds, false, &events);
  EXPECT_EQ(events.count_containing("conv2d"), 3u);
  expect_same_outputs(split, run_all(payload, {{&in}}, bounds, true));
}

TEST_F(XnnpackStagedTest, DynamicShapesFlowStageByStage) {
  // Declared sizes are upper bounds; each call's shapes go conv -> XNNPACK
  // -> conv, and the output is resized to match. The second conv (128
  // input channels) has 72 Winograd tiles at the declared size, 36 for the
  // first call (Winograd) and 12 for the second (im2col).
  PayloadBuilder b;
  const uint32_t x = b.input({2, 24, 24, 8}, 0);
  const uint32_t t1 = b.internal({2, 12, 12, 128});
  const uint32_t t2 = b.internal({2, 12, 12, 128});
  const uint32_t y = b.output({2, 12, 12, 4}, 1);
  add_conv(b, {8, 128, 3, 2, 1}, x, t1, 50);
  auto* h = b.node<fb::_XNNNode1x1T>(Kind::XNNHardswish);
  h->input_id = t1, h->output_id = t2;
  add_conv(b, {128, 4, 3, 1, 1}, t2, y, 52);
  const auto payload = b.build();
  OwnedTensor big = float_tensor({1, 24, 24, 8}, random_values(24 * 24 * 8, 54));
  OwnedTensor odd = float_tensor({2, 7, 10, 8}, random_values(2 * 7 * 10 * 8, 55));
  const std::vector<std::vector<OwnedTensor*>> calls = {{&big}, {&odd}, {&big}};
  DelegateEventNames events;
  const auto split = run_all(payload, calls, {{2, 12, 12, 4}}, false, &events);
  EXPECT_EQ(events.count_containing("conv2d"), 6u);
  EXPECT_EQ(events.count_containing("conv2d Winograd #2"), 2u)
      << ::testing::PrintToString(events.names);
  ASSERT_EQ(split.size(), 3u);
  EXPECT_EQ(split[0].shapes[0], (std::vector<SizesType>{1, 12, 12, 4}));
  EXPECT_EQ(split[1].shapes[0], (std::vector<SizesType>{2, 4, 5, 4}));
  EXPECT_EQ(split[2].shapes[0], (std::vector<SizesType>{1, 12, 12, 4}));
  expect_same_outputs(split, run_all(payload, calls, {{2, 12, 12, 4}}, true));
}

TEST_F(XnnpackStagedTest, InputSmallerThanTheWindowIsANamedError) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 8, 8, 8}, 0);
  const uint32_t t = b.internal({1, 6, 6, 8});
  const uint32_t y = b.output({1, 6, 6, 8}, 1);
  add_conv(b, {8, 8, 3}, x, t, 60);
  add_binary(b, Kind::XNNMultiply, t, t, y);
  const auto payload = b.build();
  LoadedDelegate d(payload);
  ASSERT_TRUE(d.status().ok()) << d.status().message();
  OwnedTensor tiny = float_tensor({1, 2, 2, 8}, random_values(32, 61));
  Result<OwnedTensor> out =
      OwnedTensor::make(ScalarType::kFloat, {1, 6, 6, 8}, TensorShapeDynamism::kDynamicBound);
  ASSERT_TRUE(out.ok());
  Status s = d.execute({tiny.evalue(), out->evalue()});
  EXPECT_EQ(s.code(), Error::kInvalidArgument);
  // The input shape check refuses it before the conv2d stage would (its
  // own "smaller than the convolution window" error): XNNPACK alone needs
  // the window to fit too (XnnpackShapeInferenceTest).
  EXPECT_NE(std::string(s.message()).find("XNNPACK node 0 (XNNConv2d): its window of 3 rows is "
                                          "larger than the input's 2 with padding 0"),
            std::string::npos)
      << s.message();
  // The delegate still runs a fitting input afterwards.
  OwnedTensor fits = float_tensor({1, 8, 8, 8}, random_values(8 * 8 * 8, 62));
  EXPECT_TRUE(d.execute({fits.evalue(), out->evalue()}).ok());
}

TEST_F(XnnpackStagedTest, ConvolutionsConv2dCannotMatchOrWouldSlowStayOnXnnpack) {
  // Grouped, asymmetric padding, TensorFlow SAME padding (a flag), a 1x1
  // product of 32 (too short), and 4 input channels (XNNPACK's first-layer
  // kernel is faster there).
  PayloadBuilder b;
  const uint32_t x = b.input({1, 6, 6, 16}, 0);
  const uint32_t t1 = b.internal({1, 6, 6, 16});
  const uint32_t t2 = b.internal({1, 6, 7, 16});
  const uint32_t t3 = b.internal({1, 6, 7, 32});
  const uint32_t t4 = b.internal({1, 6, 7, 4});
  const uint32_t y = b.output({1, 4, 5, 4}, 1);
  add_conv(b, {16, 16, 3, 1, 1}, x, t1, 70);
  auto* grouped = static_cast<fb::_XNNNodeConvT*>(b.graph.xnodes.back()->xnode_union.value);
  grouped->groups = 2, grouped->group_input_channels = 8, grouped->group_output_channels = 8;
  b.graph.xvalues[grouped->filter_id]->xvalue_union.AsXNNTensorValue()->dims = {16, 3, 3, 8};
  add_conv(b, {16, 16, 3, 1, 1}, t1, t2, 72);
  auto* asymmetric = static_cast<fb::_XNNNodeConvT*>(b.graph.xnodes.back()->xnode_union.value);
  asymmetric->padding_left = 2, asymmetric->padding_right = 1;
  add_conv(b, {16, 32, 3}, t2, t3, 74);
  constexpr uint32_t kTensorflowSamePadding = 0x4;  // XNN_FLAG_TENSORFLOW_SAME_PADDING
  static_cast<fb::_XNNNodeConvT*>(b.graph.xnodes.back()->xnode_union.value)->flags =
      kTensorflowSamePadding;
  add_conv(b, {32, 4, 1}, t3, t4, 76);
  add_conv(b, {4, 4, 3}, t4, y, 78);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 6, 6, 16}, random_values(6 * 6 * 16, 80));
  DelegateEventNames events;
  const auto split = run_all(payload, {{&in}}, {{1, 4, 5, 4}}, false, &events);
  EXPECT_EQ(events.count_containing("conv2d"), 0u);
  EXPECT_GE(events.count_containing("Convolution"), 5u);
  expect_same_outputs(split, run_all(payload, {{&in}}, {{1, 4, 5, 4}}, true));
}

TEST_F(XnnpackStagedTest, ConvolutionWhoseUnfoldedInputExceedsTheBudgetStaysOnXnnpack) {
  // conv2d unfolds the declared input (here 1M pixels x 72 floats, 288 MiB)
  // at init; with a budget of 80 MiB for a delegate's activations (these
  // two take 64 MiB), a payload must not make it allocate more (the fuzz
  // target's budget is 256 MiB; XNNPACK needs no such buffer).
  PayloadBuilder b;
  const uint32_t x = b.input({1, 1024, 1024, 8}, 0), y = b.output({1, 1024, 1024, 8}, 1);
  add_conv(b, {8, 8, 3, 1, 1}, x, y, 90);
  const auto payload = b.build();
  for (uint64_t budget : {uint64_t{80} << 20, kXnnpackDefaultMaxValueBytes}) {
    SCOPED_TRACE("budget " + std::to_string(budget));
    const XnnpackBackend backend(budget);
    DelegateEventNames events;
    LoadedDelegate d(payload, backend, &events);
    ASSERT_TRUE(d.status().ok()) << d.status().message();
    OwnedTensor in = float_tensor({1, 4, 4, 8}, random_values(128, 91));
    Result<OwnedTensor> out = OwnedTensor::make(ScalarType::kFloat, {1, 1024, 1024, 8},
                                                TensorShapeDynamism::kDynamicBound);
    ASSERT_TRUE(out.ok());
    const Status s = d.execute({in.evalue(), out->evalue()});
    ASSERT_TRUE(s.ok()) << s.message();
    EXPECT_EQ(events.count_containing("conv2d"), budget == kXnnpackDefaultMaxValueBytes ? 1u : 0u)
        << ::testing::PrintToString(events.names);
  }
}

TEST(XnnpackConvRoutingTest, Avx512SendsOnlyLargeFiltersToConv2d) {
  struct Case {
    GemmIsa isa;
    uint64_t in_channels, out_channels, kernel;
    bool conv2d;
  };
  // ResNet-18's layer1 3x3 64->64, layer3 3x3 from 128 and 256 channels,
  // layer4 3x3 from 256 and 512; the 3-channel stem; MobileNetV2's 1x1
  // 24->144 and 320->1280 (its largest filter).
  const Case cases[] = {
      {GemmIsa::kAvx2, 64, 64, 3, true},       {GemmIsa::kAvx2, 512, 512, 3, true},
      {GemmIsa::kAvx2, 3, 64, 7, false},       {GemmIsa::kAvx2, 24, 144, 1, false},
      {GemmIsa::kAvx2, 320, 1280, 1, true},    {GemmIsa::kAvx512, 64, 64, 3, false},
      {GemmIsa::kAvx512, 128, 256, 3, false},  {GemmIsa::kAvx512, 256, 256, 3, true},
      {GemmIsa::kAvx512, 256, 512, 3, true},   {GemmIsa::kAvx512, 512, 512, 3, true},
      {GemmIsa::kAvx512, 3, 64, 7, false},     {GemmIsa::kAvx512, 320, 1280, 1, false},
      // AMX: 64+ outputs and 64+ products (MobileNetV2's 1x1 64->384,
      // 96->576 and 320->1280, ResNet-18's 3x3 layers), not narrow ones,
      // 3-channel ones or MobileNetV2's 1x1 32->192.
      {GemmIsa::kAmx, 64, 64, 3, true},        {GemmIsa::kAmx, 32, 192, 1, false},
      {GemmIsa::kAmx, 64, 384, 1, true},       {GemmIsa::kAmx, 96, 576, 1, true},
      {GemmIsa::kAmx, 320, 1280, 1, true},     {GemmIsa::kAmx, 384, 32, 1, false},
      {GemmIsa::kAmx, 24, 144, 1, false},      {GemmIsa::kAmx, 3, 64, 7, false},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(conv2d_is_faster(conv_routing_for(c.isa), c.in_channels, c.out_channels, c.kernel,
                               c.kernel),
              c.conv2d)
        << optimized::to_string(c.isa) << " " << c.in_channels << "->" << c.out_channels << " "
        << c.kernel << "x" << c.kernel;
  }
  EXPECT_EQ(conv_routing_for(GemmIsa::kPortable).min_filter_floats,
            conv_routing_for(GemmIsa::kAvx2).min_filter_floats);
}

TEST(XnnpackConvRoutingTest, Avx512GemmSplitsAtLargeFiltersOnly) {
  // A 3x3 512->512 layer at 7x7 (a 2.4M-float filter) then a 1x1 512->64:
  // on the AVX-512 GEMM only the first runs on conv2d (im2col: no Winograd
  // there), on the AVX2 GEMM both do; the outputs match XNNPACK alone.
  PayloadBuilder b;
  const uint32_t x = b.input({1, 7, 7, 512}, 0);
  const uint32_t t = b.internal({1, 7, 7, 512});
  const uint32_t y = b.output({1, 7, 7, 64}, 1);
  add_conv(b, {512, 512, 3, 1, 1, 1, true}, x, t, 90);
  add_conv(b, {512, 64, 1}, t, y, 92);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 7, 7, 512}, random_values(7 * 7 * 512, 94));
  const auto alone = run_all(payload, {{&in}}, {{1, 7, 7, 64}}, true);
  {
    GemmIsaScope avx512(GemmIsa::kAvx512);
    if (!avx512.forced()) GTEST_SKIP() << "this CPU has no AVX-512F";
    DelegateEventNames events;
    const auto split = run_all(payload, {{&in}}, {{1, 7, 7, 64}}, false, &events);
    EXPECT_EQ(events.count_containing("conv2d"), 1u) << ::testing::PrintToString(events.names);
    EXPECT_EQ(events.count_containing("conv2d #1"), 1u);
    expect_same_outputs(split, alone);
  }
  GemmIsaScope avx2(GemmIsa::kAvx2);
  ASSERT_TRUE(avx2.forced());
  DelegateEventNames events;
  const auto split = run_all(payload, {{&in}}, {{1, 7, 7, 64}}, false, &events);
  EXPECT_EQ(events.count_containing("conv2d"), 2u) << ::testing::PrintToString(events.names);
  expect_same_outputs(split, alone);
}

TEST(XnnpackConvRoutingTest, AmxGemmRunsWideConvolutionsWithSplitFilters) {
  // At 56x56: 3x3 64->64 (116M multiply-adds: conv2d on AMX), 1x1 64->32
  // (too narrow: XNNPACK), 1x1 32->128 (products of 32: XNNPACK), 3x3
  // 128->64 (231M: conv2d). Two conv2d stages whose
  // filters were split at init; the outputs match XNNPACK alone within
  // fp32 rounding.
  PayloadBuilder b;
  const uint32_t x = b.input({1, 56, 56, 64}, 0);
  const uint32_t t = b.internal({1, 56, 56, 64});
  const uint32_t u = b.internal({1, 56, 56, 32});
  const uint32_t v = b.internal({1, 56, 56, 128});
  const uint32_t y = b.output({1, 56, 56, 64}, 1);
  add_conv(b, {64, 64, 3, 1, 1, 1, true}, x, t, 90);
  add_conv(b, {64, 32, 1}, t, u, 92);
  add_conv(b, {32, 128, 1}, u, v, 94);
  add_conv(b, {128, 64, 3, 1, 1, 1, true}, v, y, 96);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 56, 56, 64}, random_values(56 * 56 * 64, 98));
  const auto alone = run_all(payload, {{&in}}, {{1, 56, 56, 64}}, true);
  GemmIsaScope amx(GemmIsa::kAmx);
  if (!amx.forced()) GTEST_SKIP() << "this CPU has no AMX-BF16 (or the OS did not grant it)";
  DelegateEventNames events;
  const auto split = run_all(payload, {{&in}}, {{1, 56, 56, 64}}, false, &events);
  EXPECT_EQ(events.count_containing("conv2d"), 2u) << ::testing::PrintToString(events.names);
  expect_same_outputs(split, alone);
}

TEST(XnnpackConvRoutingTest, Conv2dStagesShareXnnpacksPoolAtOneAndTwoThreads) {
  // MobileNetV2-like 1x1 layers at 28x28, 9.6M multiply-adds each (expand
  // 64->192 with relu6, project 192->64, expand again), all on conv2d,
  // between XNNPACK's add: with 2 threads conv2d's chunks run on XNNPACK's
  // pthreadpool (threadpool::NativePoolScope) right after its operators.
  // The outputs match XNNPACK alone at each thread count.
  PayloadBuilder b;
  const uint32_t x = b.input({1, 28, 28, 64}, 0);
  const uint32_t e1 = b.internal({1, 28, 28, 192});
  const uint32_t p1 = b.internal({1, 28, 28, 64});
  const uint32_t s1 = b.internal({1, 28, 28, 64});
  const uint32_t y = b.output({1, 28, 28, 192}, 1);
  add_conv(b, {64, 192, 1}, x, e1, 100);
  b.clamp_last(0.0f, 6.0f);
  add_conv(b, {192, 64, 1}, e1, p1, 102);
  add_binary(b, Kind::XNNAdd, p1, x, s1);
  add_conv(b, {64, 192, 1}, s1, y, 104);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 28, 28, 64}, random_values(28 * 28 * 64, 106));
  GemmIsaScope amx(GemmIsa::kAmx);
  if (!amx.forced()) GTEST_SKIP() << "this CPU has no AMX-BF16 (or the OS did not grant it)";
  for (size_t threads : {size_t{1}, size_t{2}}) {
    SCOPED_TRACE(std::to_string(threads) + " threads");
    threadpool::set_num_threads(threads);
    const auto alone = run_all(payload, {{&in}, {&in}}, {{1, 28, 28, 192}}, true);
    DelegateEventNames events;
    const auto split = run_all(payload, {{&in}, {&in}}, {{1, 28, 28, 192}}, false, &events);
    EXPECT_EQ(events.count_containing("conv2d"), 6u) << ::testing::PrintToString(events.names);
    expect_same_outputs(split, alone);
  }
  threadpool::set_num_threads(0);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
