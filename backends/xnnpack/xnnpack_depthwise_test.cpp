// int8 depthwise 3x3 convolutions on depthwise_qs8 (depthwise_stage.h):
// each payload runs split (the convolution on our kernel) and again with
// TORCHLIGHT_XNNPACK_CONV=xnnpack on XNNPACK alone; the outputs must be
// the same bytes, since the kernel promises XNNPACK's exact arithmetic. A
// tracer shows that the kernel ran, so a routing that silently stopped
// fails too. Channel counts cover whole 32-channel blocks and tails (and
// the AVX2 variant's 16-channel steps). The kernel alone against
// XNNPACK's operator on MobileNetV2's shapes: depthwise_qs8_test.cpp.
#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/depthwise_qs8.h"
#include "backends/xnnpack/payload_builder.h"
#include "backends/xnnpack/value_view.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using Kind = fb::XNodeUnion;
using DT = fb::XNNDatatype;

constexpr float kInScale = 0.05f, kOutScale = 0.1f;
constexpr int32_t kInZp = -3, kOutZp = 4;

struct Dw {
  uint32_t n = 1, h = 9, w = 11, c = 32;
  uint32_t stride = 1;
  uint32_t pad_top = 1, pad_left = 1, pad_bottom = 1, pad_right = 1;
  bool bias = true;
  uint32_t kernel = 3;
  float min = -INFINITY, max = INFINITY;  // The convolution's own range.
};

uint32_t out_size(uint32_t in, uint32_t pad_a, uint32_t pad_b, uint32_t k, uint32_t stride) {
  return (in + pad_a + pad_b - k) / stride + 1;
}

uint32_t qint8(PayloadBuilder& b, std::vector<uint32_t> dims, uint32_t flags = 0,
               uint32_t external_id = kNone, float scale = kOutScale, int32_t zp = kOutZp) {
  return b.quantized(DT::xnn_datatype_qint8, std::move(dims), per_tensor(scale, zp), flags,
                     external_id);
}

// A depthwise convolution node from `in` to `out` (qint8 [n, h, w, c]) with
// seeded int8 weights, per-channel scales and int32 bias.
void add_depthwise(PayloadBuilder& b, const Dw& d, uint32_t in, uint32_t out, uint32_t seed) {
  const uint32_t k = d.kernel;
  std::vector<int8_t> w(k * k * d.c);
  const auto wr = random_values(w.size(), seed);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(std::lround(wr[i] * 40));
  std::vector<float> scales(d.c);
  for (uint32_t c = 0; c < d.c; ++c) scales[c] = 0.002f + 0.0005f * static_cast<float>(c % 11);
  fb::XNNQuantParamsUnion wq = per_channel(scales);
  static_cast<fb::PerChannelQuantT*>(wq.value)->channel_dim = 3;
  const uint32_t wi = b.constant_bytes(w.data(), w.size());
  const uint32_t filter =
      b.quantized(DT::xnn_datatype_qcint8, {1, k, k, d.c}, std::move(wq), 0, kNone, wi);
  uint32_t bias = kNone;
  if (d.bias) {
    std::vector<int32_t> bv(d.c);
    std::vector<float> bs(d.c);
    for (uint32_t c = 0; c < d.c; ++c) {
      bv[c] = static_cast<int32_t>((c * 7919 + seed) % 2001) - 1000;
      bs[c] = kInScale * scales[c];
    }
    const uint32_t bi = b.constant_bytes(bv.data(), bv.size() * 4);
    bias = b.quantized(DT::xnn_datatype_qcint32, {d.c}, per_channel(bs), 0, kNone, bi);
  }
  auto* n = b.node<fb::_XNNNodeConvT>(Kind::XNNDepthwiseConv2d);
  n->padding_top = d.pad_top, n->padding_left = d.pad_left;
  n->padding_bottom = d.pad_bottom, n->padding_right = d.pad_right;
  n->kernel_height = n->kernel_width = k;
  n->subsampling_height = n->subsampling_width = d.stride;
  n->dilation_height = n->dilation_width = 1;
  n->groups = d.c;
  n->group_input_channels = 1;
  n->group_output_channels = 1;
  n->input1_id = in, n->filter_id = filter, n->bias_id = bias, n->output_id = out;
  if (std::isfinite(d.min) || std::isfinite(d.max)) b.clamp_last(d.min, d.max);
}

void add_clamp(PayloadBuilder& b, uint32_t in, uint32_t out, float min, float max) {
  auto* n = b.node<fb::_XNNNode1x1T>(Kind::XNNClamp);
  n->input_id = in, n->output_id = out;
  b.clamp_last(min, max);
}

void add_add(PayloadBuilder& b, uint32_t a, uint32_t c, uint32_t out) {
  auto* n = b.node<fb::_XNNNode2x1T>(Kind::XNNAdd);
  n->input1_id = a, n->input2_id = c, n->output_id = out;
}

OwnedTensor int8_input(const std::vector<SizesType>& sizes, uint32_t seed) {
  Result<OwnedTensor> t = OwnedTensor::make(ScalarType::kChar, sizes);
  EXPECT_TRUE(t.ok());
  int8_t* p = t->tensor().mutable_data_ptr<int8_t>();
  const auto r = random_values(t->tensor().numel(), seed);
  for (size_t i = 0; i < r.size(); ++i) p[i] = static_cast<int8_t>(std::lround(r[i] * 127));
  return std::move(t.get());
}

struct Run {
  Status status;
  std::vector<std::vector<int8_t>> outputs;  // Per input set.
  size_t depthwise_events = 0;
};

// Loads `payload` (split, or on XNNPACK alone) and runs it on each input
// shape; the output is a dynamic-bound qint8 tensor of `out_bound`.
Run run(const std::vector<uint8_t>& payload, const std::vector<std::vector<SizesType>>& inputs,
        const std::vector<SizesType>& out_bound, bool xnnpack_only) {
  std::unique_ptr<XnnpackOnly> only;
  if (xnnpack_only) only = std::make_unique<XnnpackOnly>();
  DelegateEventNames events;
  LoadedDelegate d(payload, xnnpack_backend(), &events);
  Run r;
  r.status = d.status();
  if (!r.status.ok()) return r;
  uint32_t seed = 70;
  for (const auto& sizes : inputs) {
    OwnedTensor x = int8_input(sizes, seed++);
    Result<OwnedTensor> y =
        OwnedTensor::make(ScalarType::kChar, out_bound, TensorShapeDynamism::kDynamicBound);
    EXPECT_TRUE(y.ok());
    r.status = d.execute({x.evalue(), y->evalue()});
    if (!r.status.ok()) return r;
    const int8_t* p = y->tensor().const_data_ptr<int8_t>();
    r.outputs.emplace_back(p, p + y->tensor().numel());
  }
  r.depthwise_events = events.count_containing("depthwise_qs8");
  return r;
}

// Split and XNNPACK-only runs give the same bytes; the split one ran the
// kernel `expected_events` times per input set where the CPU has it.
void expect_same_as_xnnpack(const std::vector<uint8_t>& payload,
                            const std::vector<std::vector<SizesType>>& inputs,
                            const std::vector<SizesType>& out_bound, size_t expected_events) {
  const Run split = run(payload, inputs, out_bound, false);
  const Run alone = run(payload, inputs, out_bound, true);
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  ASSERT_TRUE(alone.status.ok()) << alone.status.message();
  EXPECT_EQ(alone.depthwise_events, 0u);
  EXPECT_EQ(split.depthwise_events,
            depthwise_qs8_supported() ? expected_events * inputs.size() : 0u);
  ASSERT_EQ(split.outputs.size(), alone.outputs.size());
  for (size_t i = 0; i < split.outputs.size(); ++i) {
    ASSERT_EQ(split.outputs[i].size(), alone.outputs[i].size());
    size_t differ = 0, first = 0;
    for (size_t k = 0; k < split.outputs[i].size(); ++k) {
      if (split.outputs[i][k] != alone.outputs[i][k] && differ++ == 0) first = k;
    }
    EXPECT_EQ(differ, 0u) << "input set " << i << ": first difference at " << first << " ("
                          << int(split.outputs[i][first]) << " vs "
                          << int(alone.outputs[i][first]) << ")";
  }
}

// x -> depthwise [-> clamp] -> y, both graph values.
void check_single(const Dw& d, bool clamp) {
  PayloadBuilder b;
  const uint32_t oh = out_size(d.h, d.pad_top, d.pad_bottom, d.kernel, d.stride);
  const uint32_t ow = out_size(d.w, d.pad_left, d.pad_right, d.kernel, d.stride);
  const uint32_t x = qint8(b, {d.n, d.h, d.w, d.c}, kExternalInput, 0, kInScale, kInZp);
  const uint32_t y = qint8(b, {d.n, oh, ow, d.c}, kExternalOutput, 1);
  if (clamp) {
    const uint32_t t = qint8(b, {d.n, oh, ow, d.c});
    add_depthwise(b, d, x, t, 5);
    add_clamp(b, t, y, 0.0f, 3.0f);
  } else {
    add_depthwise(b, d, x, y, 5);
  }
  const std::vector<SizesType> in = {SizesType(d.n), SizesType(d.h), SizesType(d.w),
                                     SizesType(d.c)};
  const std::vector<SizesType> out = {SizesType(d.n), SizesType(oh), SizesType(ow),
                                      SizesType(d.c)};
  expect_same_as_xnnpack(b.build(), {in}, out, d.kernel == 3 ? 1 : 0);
}

// The kernel's variant capped at `cap` while alive (depthwise_qs8.h).
class CappedIsa {
 public:
  explicit CappedIsa(DepthwiseQs8Isa cap) { depthwise_qs8_cap_isa(cap); }
  ~CappedIsa() { depthwise_qs8_cap_isa(DepthwiseQs8Isa::kVnni); }
};

TEST(XnnpackDepthwiseTest, SameBytesAsXnnpackOverChannelsStridesAndPadding) {
  for (uint32_t c : {32u, 48u, 37u, 144u, 5u}) {
    for (uint32_t stride : {1u, 2u}) {
      for (bool clamp : {false, true}) {
        SCOPED_TRACE("channels " + std::to_string(c) + " stride " + std::to_string(stride) +
                     (clamp ? " clamp" : ""));
        Dw d;
        d.c = c, d.stride = stride;
        check_single(d, clamp);
      }
    }
  }
}

// Every variant below the CPU's best (AVX2's vpmaddwd in 256 bits, and
// AVX-512's without VNNI) on the same payloads.
TEST(XnnpackDepthwiseTest, SameBytesOnEveryLowerVariant) {
  const DepthwiseQs8Isa best = depthwise_qs8_isa();
  for (DepthwiseQs8Isa cap : {DepthwiseQs8Isa::kAvx2, DepthwiseQs8Isa::kAvx512}) {
    if (cap >= best) continue;
    CappedIsa capped(cap);
    for (uint32_t c : {48u, 37u, 16u, 8u}) {
      for (uint32_t stride : {1u, 2u}) {
        SCOPED_TRACE("variant " + std::to_string(int(cap)) + " channels " + std::to_string(c) +
                     " stride " + std::to_string(stride));
        Dw d;
        d.c = c, d.stride = stride;
        check_single(d, true);
      }
    }
  }
}

// On an AVX2 CPU without AVX-512 (this repository's Zen 1 runners) the
// AVX2 variant takes MobileNetV2's depthwise layers; capped to kNone,
// nothing does and XNNPACK keeps them.
TEST(XnnpackDepthwiseTest, RoutingFollowsTheVariant) {
  if (__builtin_cpu_supports("avx2") && !__builtin_cpu_supports("avx512f")) {
    EXPECT_EQ(depthwise_qs8_isa(), DepthwiseQs8Isa::kAvx2);
  }
  Dw d;
  d.c = 24;
  check_single(d, true);  // One kernel event where supported.
  CappedIsa none(DepthwiseQs8Isa::kNone);
  EXPECT_FALSE(depthwise_qs8_supported());
  check_single(d, true);  // No event.
}

TEST(XnnpackDepthwiseTest, UnevenPaddingBatchNoBiasAndOwnRange) {
  Dw d;
  d.n = 2, d.h = 8, d.w = 7, d.c = 40;
  d.pad_top = 0, d.pad_left = 2, d.pad_bottom = 2, d.pad_right = 0;
  d.bias = false;
  d.min = -1.0f, d.max = 2.5f;
  check_single(d, false);
  check_single(d, true);  // The clamp's range meets the convolution's.
  d.stride = 2, d.pad_top = 1, d.pad_left = 0;
  check_single(d, true);
}

TEST(XnnpackDepthwiseTest, ClampRangeDisjointFromTheConvolutionsIsNotFolded) {
  // The convolution clamps to [4, 6] and the clamp after it to [0, 3]:
  // every output is 3 (quantized: 3 / 0.1 + 4). Folded into one range
  // [4, 3], the kernel gave 44. XNNPACK alone refuses the graph (its own
  // fusion makes the same empty range), as upstream's runtime does: so on
  // CPUs without the kernel, init fails with XNNPACK's named error.
  Dw d;
  d.min = 4.0f, d.max = 6.0f;
  PayloadBuilder b;
  const uint32_t x = qint8(b, {1, d.h, d.w, d.c}, kExternalInput, 0, kInScale, kInZp);
  const uint32_t y = qint8(b, {1, d.h, d.w, d.c}, kExternalOutput, 1);
  const uint32_t t = qint8(b, {1, d.h, d.w, d.c});
  add_depthwise(b, d, x, t, 5);
  add_clamp(b, t, y, 0.0f, 3.0f);
  const std::vector<SizesType> shape = {1, SizesType(d.h), SizesType(d.w), SizesType(d.c)};
  const auto split = run(b.build(), {shape}, shape, false);
  if (!depthwise_qs8_supported()) {
    ASSERT_FALSE(split.status.ok());
    EXPECT_NE(std::string(split.status.message()).find("XNNPACK could not build a runtime"),
              std::string::npos)
        << split.status.message();
    return;
  }
  ASSERT_TRUE(split.status.ok()) << split.status.message();
  EXPECT_EQ(split.depthwise_events, 1u);
  ASSERT_EQ(split.outputs.size(), 1u);
  for (int8_t v : split.outputs[0]) ASSERT_EQ(v, 34);
}

TEST(XnnpackDepthwiseTest, OnlyThreeByThreeLeavesXnnpack) {
  Dw d;
  d.kernel = 5, d.pad_top = d.pad_left = d.pad_bottom = d.pad_right = 2;
  check_single(d, true);  // Expects no depthwise_qs8 event.
}

// x -> add(x, x) -> depthwise -> clamp -> add(., .) -> y, and a second
// reader of the depthwise output (no folding then): qint8 values cross
// between XNNPACK stages and the kernel through the arena.
std::vector<uint8_t> chain(const Dw& d, bool second_reader) {
  PayloadBuilder b;
  const uint32_t oh = out_size(d.h, d.pad_top, d.pad_bottom, 3, d.stride);
  const uint32_t ow = out_size(d.w, d.pad_left, d.pad_right, 3, d.stride);
  const uint32_t x = qint8(b, {d.n, d.h, d.w, d.c}, kExternalInput, 0, kInScale, kInZp);
  const uint32_t doubled = qint8(b, {d.n, d.h, d.w, d.c}, 0, kNone, kInScale, kInZp);
  const uint32_t conv = qint8(b, {d.n, oh, ow, d.c});
  const uint32_t clamped = qint8(b, {d.n, oh, ow, d.c});
  const uint32_t y = qint8(b, {d.n, oh, ow, d.c}, kExternalOutput, 1);
  add_add(b, x, x, doubled);
  add_depthwise(b, d, doubled, conv, 9);
  add_clamp(b, conv, clamped, -2.0f, 2.0f);
  add_add(b, clamped, second_reader ? conv : clamped, y);
  return b.build();
}

TEST(XnnpackDepthwiseTest, BetweenXnnpackStagesWithAndWithoutFolding) {
  Dw d;
  d.h = 10, d.w = 10, d.c = 64;
  const std::vector<SizesType> in = {1, 10, 10, 64};
  const std::vector<SizesType> out = {1, 10, 10, 64};
  expect_same_as_xnnpack(chain(d, false), {in}, out, 1);
  expect_same_as_xnnpack(chain(d, true), {in}, out, 1);
}

TEST(XnnpackDepthwiseTest, DynamicShapesFlowThroughTheStage) {
  Dw d;
  d.h = 12, d.w = 12, d.c = 48, d.stride = 2;
  // Declared 12x12 (upper bounds); runs 7x9, then 12x12, then 3x3.
  expect_same_as_xnnpack(chain(d, false), {{1, 7, 9, 48}, {1, 12, 12, 48}, {1, 3, 3, 48}},
                         {1, 6, 6, 48}, 1);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
