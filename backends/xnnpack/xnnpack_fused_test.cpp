// fp32 inverted-residual blocks on the fused kernel (inverted_residual_stage.h):
// each payload runs split (the block as one stage) and again with
// TORCHLIGHT_XNNPACK_CONV=xnnpack on XNNPACK alone (whose convolutions
// xnnpack_nodes_test checks against a reference); the outputs agree within
// 1e-5 of their largest magnitude. A tracer shows which blocks were fused,
// so a pattern that silently stopped matching fails too. The conv2d routing
// is held at AVX-512's (large filters only), so no 1x1 layer here leaves
// for conv2d and every block qualifies by its pattern alone.
#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"
#include "backends/xnnpack/stage_plan.h"
#include "extension/threadpool/threadpool.h"
#include "kernels/optimized/fused/inverted_residual.h"
#include "kernels/optimized/gemm/gemm.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using Kind = fb::XNodeUnion;

struct Block {
  uint32_t n = 1, h = 9, w = 7;
  uint32_t in = 24, expanded = 144, out = 24;
  uint32_t stride = 1;
  bool expand = true;
  bool residual = false;
  // ReLU6 as each convolution's output range (our exporter) or as a clamp
  // node after it (upstream's unfused form).
  bool clamp_nodes = false;

  uint32_t out_h() const { return (h - 1) / stride + 1; }
  uint32_t out_w() const { return (w - 1) / stride + 1; }
};

void add_depthwise(PayloadBuilder& b, const Block& k, uint32_t in, uint32_t out, uint32_t seed) {
  const uint32_t c = k.expanded;
  const uint32_t filter = b.constant_f32({1, 3, 3, c}, random_values(9 * c, seed));
  const uint32_t bias = b.constant_f32({c}, random_values(c, seed + 1));
  auto* n = b.node<fb::_XNNNodeConvT>(Kind::XNNDepthwiseConv2d);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 1;
  n->kernel_height = n->kernel_width = 3;
  n->subsampling_height = n->subsampling_width = k.stride;
  n->dilation_height = n->dilation_width = 1;
  n->groups = c;
  n->group_input_channels = n->group_output_channels = 1;
  n->input1_id = in, n->filter_id = filter, n->bias_id = bias, n->output_id = out;
}

// Appends block `k` reading `x`; returns the value it writes (`y` when
// given, else an internal value).
uint32_t add_block(PayloadBuilder& b, const Block& k, uint32_t x, uint32_t y, uint32_t seed) {
  uint32_t value = x;
  if (k.expand) {
    value = b.internal({k.n, k.h, k.w, k.expanded});
    add_conv(b, {k.in, k.expanded, 1}, x, value, seed);
    add_relu6(b, k.clamp_nodes, &value, {k.n, k.h, k.w, k.expanded});
  }
  const std::vector<uint32_t> dw_dims = {k.n, k.out_h(), k.out_w(), k.expanded};
  const uint32_t dw = b.internal(dw_dims);
  add_depthwise(b, k, value, dw, seed + 2);
  value = dw;
  add_relu6(b, k.clamp_nodes, &value, dw_dims);
  const std::vector<uint32_t> out_dims = {k.n, k.out_h(), k.out_w(), k.out};
  const uint32_t projected = k.residual || y == kNone ? b.internal(out_dims) : y;
  add_conv(b, {k.expanded, k.out, 1}, value, projected, seed + 4);
  if (!k.residual) return projected;
  const uint32_t sum = y == kNone ? b.internal(out_dims) : y;
  return add_binary(b, Kind::XNNAdd, projected, x, sum);
}

class XnnpackFusedTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (!optimized::set_gemm_isa(optimized::GemmIsa::kAvx512).ok()) {
      GTEST_SKIP() << "needs the AVX-512 conv routing (no AVX-512 here)";
    }
  }
  void TearDown() override {
    optimized::reset_gemm_isa();
    threadpool::set_num_threads(0);
  }

  // Runs a one-block payload on inputs of `k`'s shape (and any `more`),
  // split and alone, at 1 and 2 threads; expects `fused` events per call.
  void check_block(const Block& k, size_t fused, std::vector<std::vector<SizesType>> more = {}) {
    PayloadBuilder b;
    const uint32_t x = b.input({k.n, k.h, k.w, k.in}, 0);
    const uint32_t y = b.output({k.n, k.out_h(), k.out_w(), k.out}, 1);
    add_block(b, k, x, y, 10);
    check_payload(b.build(), k, fused, std::move(more));
  }

  // `isa`: the kernel the fused events must name (any when null).
  void check_payload(const std::vector<uint8_t>& payload, const Block& k, size_t fused,
                     std::vector<std::vector<SizesType>> more = {}, const char* isa = nullptr) {
    std::vector<OwnedTensor> inputs;
    more.insert(more.begin(), {SizesType(k.n), SizesType(k.h), SizesType(k.w), SizesType(k.in)});
    for (size_t i = 0; i < more.size(); ++i) {
      size_t numel = 1;
      for (SizesType d : more[i]) numel *= size_t(d);
      inputs.push_back(float_tensor(more[i], random_values(numel, 20 + uint32_t(i))));
      // Inputs up to 4: ReLU6 then clips some expanded values.
      float* p = inputs.back().tensor().mutable_data_ptr<float>();
      for (size_t j = 0; j < numel; ++j) p[j] *= 4.0f;
    }
    std::vector<std::vector<OwnedTensor*>> calls;
    for (OwnedTensor& t : inputs) calls.push_back({&t});
    calls.push_back({&inputs[0]});  // Again, after any reshape.
    const std::vector<std::vector<SizesType>> bound = {
        {SizesType(k.n), SizesType(k.out_h()), SizesType(k.out_w()), SizesType(k.out)}};
    for (size_t threads : {size_t{1}, size_t{2}}) {
      SCOPED_TRACE(std::to_string(threads) + " threads");
      threadpool::set_num_threads(threads);
      DelegateEventNames events;
      const auto split = run_all(payload, calls, bound, false, &events);
      EXPECT_EQ(events.count_containing(isa == nullptr ? "Inverted residual"
                                                       : std::string("fused ") + isa + " #"),
                fused * calls.size())
          << ::testing::PrintToString(events.names);
      DelegateEventNames alone_events;
      const auto alone = run_all(payload, calls, bound, true, &alone_events);
      EXPECT_EQ(alone_events.count_containing("Inverted residual"), 0u);
      expect_same_outputs(split, alone);
    }
  }
};

TEST_F(XnnpackFusedTest, StrideOneWithResidualOddSizes) {
  Block k;
  k.residual = true;
  check_block(k, 1);
}

TEST_F(XnnpackFusedTest, StrideTwoChannelTails) {
  Block k;
  k.h = 11, k.w = 13, k.in = 5, k.expanded = 40, k.out = 24, k.stride = 2;
  check_block(k, 1);
}

TEST_F(XnnpackFusedTest, BatchTwoAndUpstreamsClampNodes) {
  Block k;
  k.n = 2, k.h = 8, k.w = 6, k.in = 40, k.expanded = 40, k.out = 40;
  k.residual = true, k.clamp_nodes = true;
  check_block(k, 1);
  k.stride = 2, k.residual = false, k.out = 5;
  check_block(k, 1);
}

TEST_F(XnnpackFusedTest, BlockWithoutExpand) {
  Block k;
  k.h = 12, k.w = 12, k.in = 32, k.expanded = 32, k.out = 16, k.expand = false;
  check_block(k, 1);
}

TEST_F(XnnpackFusedTest, DynamicShapesWithinTheDeclaredOnes) {
  // Declared [2, 12, 10]: calls with fewer rows, narrower rows and batch 1.
  Block k;
  k.n = 2, k.h = 12, k.w = 10, k.in = 16, k.expanded = 48, k.out = 16, k.residual = true;
  check_block(k, 1, {{1, 5, 7, 16}, {2, 3, 10, 16}});
}

TEST_F(XnnpackFusedTest, WiderInputThanDeclaredIsANamedError) {
  PayloadBuilder b;
  Block k;
  k.h = 6, k.w = 6, k.in = 8, k.expanded = 16, k.out = 8;
  const uint32_t x = b.input({1, 6, 6, 8}, 0);
  const uint32_t y = b.output({1, 6, 6, 8}, 1);
  add_block(b, k, x, y, 30);
  const auto payload = b.build();
  // XNNPACK refuses the input past its declared dims before any stage runs.
  OwnedTensor wide = float_tensor({1, 6, 9, 8}, random_values(6 * 9 * 8, 31));
  const auto split = run_all(payload, {{&wide}}, {{1, 6, 9, 8}}, false);
  ASSERT_EQ(split.size(), 1u);
  EXPECT_FALSE(split[0].status.ok());
}

TEST_F(XnnpackFusedTest, TwoBlocksInARowAndOtherInstructionSets) {
  // MobileNetV2's stride-2 block then a residual one at the next size: the
  // first block's output crosses to the second through the arena.
  Block first, second;
  first.h = 14, first.w = 14, first.in = 16, first.expanded = 96, first.out = 24, first.stride = 2;
  second.h = 7, second.w = 7, second.in = 24, second.expanded = 144, second.out = 24;
  second.residual = true;
  PayloadBuilder b;
  const uint32_t x = b.input({1, 14, 14, 16}, 0);
  const uint32_t y = b.output({1, 7, 7, 24}, 1);
  const uint32_t mid = add_block(b, first, x, kNone, 40);
  add_block(b, second, mid, y, 50);
  const auto payload = b.build();
  Block shape = first;
  shape.out = 24;
  for (const char* isa : {"avx512", "avx2", "generic"}) {
    SCOPED_TRACE(isa);
    setenv("TORCHLIGHT_FUSED_ISA", isa, 1);
    check_payload(payload, shape, 2, {}, isa);
  }
  unsetenv("TORCHLIGHT_FUSED_ISA");
}

// expand -> dw -> project, with the value after `second_reader` (0: the
// expanded tensor, 1: the depthwise output) also summed into a graph output.
std::vector<uint8_t> block_with_second_reader(int second_reader) {
  Block k;
  k.h = 6, k.w = 6, k.in = 8, k.expanded = 16, k.out = 8;
  PayloadBuilder b;
  const uint32_t x = b.input({1, 6, 6, 8}, 0);
  const uint32_t y = b.output({1, 6, 6, 8}, 1);
  const uint32_t side = b.output({1, 6, 6, 16}, 2);
  const uint32_t e = b.internal({1, 6, 6, 16});
  add_conv(b, {8, 16, 1}, x, e, 60);
  b.clamp_last(0.0f, 6.0f);
  const uint32_t dw = b.internal({1, 6, 6, 16});
  add_depthwise(b, k, e, dw, 62);
  b.clamp_last(0.0f, 6.0f);
  add_conv(b, {16, 8, 1}, dw, y, 64);
  const uint32_t shared = second_reader == 0 ? e : dw;
  add_binary(b, Kind::XNNAdd, shared, shared, side);
  return b.build();
}

TEST_F(XnnpackFusedTest, IntermediateWithASecondReaderIsNotFused) {
  OwnedTensor in = float_tensor({1, 6, 6, 8}, random_values(6 * 6 * 8, 66));
  const std::vector<std::vector<SizesType>> bounds = {{1, 6, 6, 8}, {1, 6, 6, 16}};
  // The expanded tensor read twice: the expand stays on XNNPACK, written
  // whole; the depthwise and projection still form a block without expand.
  auto payload = block_with_second_reader(0);
  DelegateEventNames events;
  auto split = run_all(payload, {{&in}}, bounds, false, &events);
  EXPECT_EQ(events.count_containing("Inverted residual"), 1u);
  EXPECT_EQ(events.count_containing("Convolution (NHWC, F32)"), 1u)
      << ::testing::PrintToString(events.names);
  expect_same_outputs(split, run_all(payload, {{&in}}, bounds, true));
  // The depthwise output read twice: nothing fuses.
  payload = block_with_second_reader(1);
  DelegateEventNames unfused;
  split = run_all(payload, {{&in}}, bounds, false, &unfused);
  EXPECT_EQ(unfused.count_containing("Inverted residual"), 0u)
      << ::testing::PrintToString(unfused.names);
  EXPECT_EQ(unfused.count_containing("Convolution (NHWC, F32)"), 3u);
  expect_same_outputs(split, run_all(payload, {{&in}}, bounds, true));
}

TEST_F(XnnpackFusedTest, FuseZeroKeepsTheBlockOnXnnpack) {
  Block k;
  k.residual = true;
  PayloadBuilder b;
  const uint32_t x = b.input({k.n, k.h, k.w, k.in}, 0);
  const uint32_t y = b.output({k.n, k.h, k.w, k.out}, 1);
  add_block(b, k, x, y, 70);
  const auto payload = b.build();
  OwnedTensor in = float_tensor({1, 9, 7, 24}, random_values(9 * 7 * 24, 71));
  setenv("TORCHLIGHT_XNNPACK_FUSE", "0", 1);
  DelegateEventNames events;
  run_all(payload, {{&in}}, {{1, 9, 7, 24}}, false, &events);
  unsetenv("TORCHLIGHT_XNNPACK_FUSE");
  EXPECT_EQ(events.count_containing("Inverted residual"), 0u);
  EXPECT_GE(events.count_containing("Convolution"), 3u) << ::testing::PrintToString(events.names);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

// On the AMX routing (AMX CPUs only), blocks whose 1x1 layers conv2d would
// take (64+ outputs, 64+ input channels, 4M+ multiply-adds) run on the
// kernel's kAmx variant, checked the same way against XNNPACK alone.
class XnnpackFusedAmxTest : public XnnpackFusedTest {
 protected:
  void SetUp() override {
    if (!optimized::set_gemm_isa(optimized::GemmIsa::kAmx).ok()) {
      GTEST_SKIP() << "needs AMX";
    }
  }
  void check_amx(const Block& k, size_t fused) {
    PayloadBuilder b;
    const uint32_t x = b.input({k.n, k.h, k.w, k.in}, 0);
    const uint32_t y = b.output({k.n, k.out_h(), k.out_w(), k.out}, 1);
    add_block(b, k, x, y, 70);
    check_payload(b.build(), k, fused, {}, fused > 0 ? "amx" : nullptr);
  }
};

TEST_F(XnnpackFusedAmxTest, MobileNetV2LaterBlocksRunOnAmxTiles) {
  Block k;
  k.h = 14, k.w = 14, k.in = 64, k.expanded = 384, k.out = 64, k.residual = true;
  check_amx(k, 1);
  k.n = 2, k.clamp_nodes = true;  // batch 2, upstream's clamp nodes
  check_amx(k, 1);
  k.n = 1, k.clamp_nodes = false;
  k.in = 96, k.expanded = 576, k.out = 160, k.stride = 2, k.residual = false;
  check_amx(k, 1);
}

TEST_F(XnnpackFusedAmxTest, OddSizesAndChannelTails) {
  Block k;
  k.h = 15, k.w = 13, k.in = 72, k.expanded = 392, k.out = 72, k.residual = true;
  check_amx(k, 1);
  k.h = 17, k.w = 15, k.out = 100, k.stride = 2, k.residual = false;
  check_amx(k, 1);
}

TEST_F(XnnpackFusedAmxTest, FusedIsaCapKeepsTheBlockOnConv2d) {
  Block k;
  k.h = 14, k.w = 14, k.in = 64, k.expanded = 384, k.out = 64, k.residual = true;
  setenv("TORCHLIGHT_FUSED_ISA", "avx512", 1);
  check_amx(k, 0);
  unsetenv("TORCHLIGHT_FUSED_ISA");
}

// On the AVX2 routing conv2d takes 1x1 layers of 64+ input channels, most
// of MobileNetV2's projections; the block runs fused on the row kernel all
// the same (faster there than XNNPACK's operators around conv2d's 1x1).
class XnnpackFusedAvx2Test : public XnnpackFusedTest {
 protected:
  void SetUp() override {
    if (!optimized::set_gemm_isa(optimized::GemmIsa::kAvx2).ok()) GTEST_SKIP() << "needs AVX2";
  }
};

TEST_F(XnnpackFusedAvx2Test, BlocksWhoseProjectionConv2dWouldTakeRunFused) {
  const ConvRouting avx2 = conv_routing_for(optimized::GemmIsa::kAvx2);
  ASSERT_TRUE(avx2.row_kernel_beats_conv2d);
  EXPECT_FALSE(conv_routing_for(optimized::GemmIsa::kAvx512).row_kernel_beats_conv2d);
  EXPECT_FALSE(conv_routing_for(optimized::GemmIsa::kAmx).row_kernel_beats_conv2d);
  Block k;  // MobileNetV2's 24 -> 144 -> 24 + add, as the Python test's second block.
  k.residual = true;
  ASSERT_TRUE(conv2d_is_faster(avx2, k.expanded, k.out, 1, 1));
  check_block(k, 1);
  k.in = 64, k.expanded = 384, k.out = 96, k.residual = false;  // Both 1x1 layers.
  ASSERT_TRUE(conv2d_is_faster(avx2, k.in, k.expanded, 1, 1));
  check_block(k, 1);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
