// Replays payloads through the fuzz target (fuzz_xnnpack_payload.cpp) in
// ordinary release and ASan builds: upstream's MLP payload, payloads built
// here for several node kinds, the seeds of fuzz/corpus/xnnpack_payload
// that reach each stage of our own kernels (built here too: with
// XNN_FUZZ_WRITE_SEEDS=1 the test rewrites them), and every single-byte
// inversion of each one's header and flatbuffer.
// Passing means no crash and no sanitizer report.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/depthwise_qs8.h"
#include "backends/xnnpack/linear_stage.h"
#include "backends/xnnpack/payload_builder.h"
#include "kernels/optimized/gemm/gemm.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

void replay(const std::vector<uint8_t>& payload) {
  std::vector<uint8_t> exact(payload);  // Exactly `size` bytes, as libFuzzer gives.
  LLVMFuzzerTestOneInput(exact.empty() ? nullptr : exact.data(), exact.size());
}

void replay_with_flips(const std::vector<uint8_t>& payload) {
  if (const char* dump = std::getenv("XNN_FUZZ_DUMP")) {
    std::ofstream(dump, std::ios::binary).write(reinterpret_cast<const char*>(payload.data()), payload.size());
  }
  replay(payload);
  // Flipping constant bytes only changes weights; the header and flatbuffer
  // are what the parser reads. In header mode they end at constant_data_offset.
  size_t end = payload.size();
  if (payload.size() >= 22 && std::memcmp(payload.data() + 4, "XH00", 4) == 0) {
    end = std::min<size_t>(end, payload[18] | payload[19] << 8 | payload[20] << 16 |
                                    static_cast<size_t>(payload[21]) << 24);
  }
  for (size_t i = 0; i < end; ++i) {
    std::vector<uint8_t> p(payload);
    p[i] ^= 0xff;
    if (std::getenv("XNN_FUZZ_TRACE")) std::fprintf(stderr, "flip %zu\n", i);
    replay(p);
  }
}

std::string corpus_path(const std::string& file) {
  return std::string(TORCHLIGHT_SOURCE_DIR) + "/fuzz/corpus/xnnpack_payload/" + file;
}

std::vector<uint8_t> read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(XnnpackFuzzTest, SeedCorpusPayload) {
  const std::string path = corpus_path("mlp_xnnpack_payload.bin");
  ASSERT_TRUE(std::ifstream(path).good()) << path;
  const std::vector<uint8_t> bytes = read_bytes(path);
  ASSERT_EQ(bytes.size(), 3584u);
  replay_with_flips(bytes);
}

TEST(XnnpackFuzzTest, BuiltPayloadsOfSeveralNodeKinds) {
  // conv -> sigmoid -> conv, 8 input channels each: the convolutions run on
  // conv2d (stage_plan.h), so the flips reach the split as well.
  PayloadBuilder conv;
  {
    const uint32_t x = conv.input({1, 4, 4, 8}, 0);
    const uint32_t w1 = conv.constant_f32({8, 3, 3, 8}, random_values(576, 1));
    const uint32_t w2 = conv.constant_f32({3, 3, 3, 8}, random_values(216, 2));
    const uint32_t y = conv.internal({1, 4, 4, 8});
    const uint32_t t = conv.internal({1, 4, 4, 8});
    const uint32_t z = conv.output({1, 4, 4, 3}, 1);
    auto add_conv = [&](uint32_t in, uint32_t filter, uint32_t out, uint32_t out_channels) {
      auto* c = conv.node<fb::_XNNNodeConvT>(fb::XNodeUnion::XNNConv2d);
      c->padding_top = c->padding_bottom = c->padding_left = c->padding_right = 1;
      c->kernel_height = c->kernel_width = 3;
      c->subsampling_height = c->subsampling_width = 1;
      c->dilation_height = c->dilation_width = 1;
      c->groups = 1, c->group_input_channels = 8, c->group_output_channels = out_channels;
      c->input1_id = in, c->filter_id = filter, c->bias_id = kNone, c->output_id = out;
    };
    add_conv(x, w1, y, 8);
    auto* s = conv.node<fb::_XNNNode1x1T>(fb::XNodeUnion::XNNSigmoid);
    s->input_id = y, s->output_id = t;
    add_conv(t, w2, z, 3);
  }
  PayloadBuilder cat;
  {
    const uint32_t a = cat.input({2, 3}, 0), b = cat.input({2, 3}, 1);
    const uint32_t y = cat.output({2, 6}, 2);
    auto* c = cat.node<fb::_XNNCatT>(fb::XNodeUnion::XNNConcatenate2);
    c->axis = 1, c->input1_id = a, c->input2_id = b, c->input3_id = kNone, c->input4_id = kNone;
    c->output_id = y;
  }
  for (const PayloadBuilder* b : {&conv, &cat}) {
    replay_with_flips(b->build());
    replay(b->build_legacy());  // Its flips are XnnpackMalformedTest's.
  }
}


// ---- Seeds that reach our own stages (stage_plan.h) ----------------------
// Small channel counts and spatial sizes that still pass each stage's
// routing; only conv2d on AMX needs a 16 KiB filter (64 outputs, patch 64).

using Kind = fb::XNodeUnion;
using DT = fb::XNNDatatype;

struct Seed {
  std::string file;
  PayloadBuilder builder;
  /// Each external value in external-id order: dtype and declared shape.
  std::vector<std::pair<ScalarType, std::vector<SizesType>>> externals;
  const char* event;  // The stage's profiling event (part of its name).
  size_t stage_events = 1;  // Its events per execute,
  size_t all_events = 1;    // and all events (XNNPACK's operators too).
  optimized::GemmIsa isa = optimized::GemmIsa::kAvx2;  // The conv routing it needs.
  bool (*supported)() = nullptr;  // Whether the stage runs on this CPU.
  size_t max_len = 32768;  // run_fuzzer.sh's -max_len (TORCHLIGHT_FUZZ_MAX_LEN) it needs.
};

// MobileNetV2's block: [1x1 expand, ReLU6] -> dw 3x3, ReLU6 -> 1x1 project
// [+ input]; ReLU6 folded into the convolutions or as Clamp nodes.
struct BlockSeed {
  uint32_t h = 5, w = 5, in = 8, expanded = 16, out = 8, stride = 1;
  bool expand = true, residual = true, clamp_nodes = false;
};

void block_seed(Seed* s, const BlockSeed& k) {
  PayloadBuilder& b = s->builder;
  const uint32_t oh = (k.h - 1) / k.stride + 1, ow = (k.w - 1) / k.stride + 1;
  const uint32_t x = b.input({1, k.h, k.w, k.in}, 0);
  uint32_t value = x;
  if (k.expand) {
    value = b.internal({1, k.h, k.w, k.expanded});
    add_conv(b, {k.in, k.expanded, 1}, x, value, 30);
    add_relu6(b, k.clamp_nodes, &value, {1, k.h, k.w, k.expanded});
  }
  const uint32_t dw = b.internal({1, oh, ow, k.expanded});
  auto* n = b.node<fb::_XNNNodeConvT>(Kind::XNNDepthwiseConv2d);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 1;
  n->kernel_height = n->kernel_width = 3;
  n->subsampling_height = n->subsampling_width = k.stride;
  n->dilation_height = n->dilation_width = 1;
  n->groups = k.expanded, n->group_input_channels = n->group_output_channels = 1;
  n->input1_id = value, n->output_id = dw;
  n->filter_id = b.constant_f32({1, 3, 3, k.expanded}, random_values(9 * k.expanded, 32));
  n->bias_id = b.constant_f32({k.expanded}, random_values(k.expanded, 33));
  value = dw;
  add_relu6(b, k.clamp_nodes, &value, {1, oh, ow, k.expanded});
  const uint32_t y = b.output({1, oh, ow, k.out}, 1);
  const uint32_t projected = k.residual ? b.internal({1, oh, ow, k.out}) : y;
  add_conv(b, {k.expanded, k.out, 1}, value, projected, 34);
  if (k.residual) add_binary(b, Kind::XNNAdd, projected, x, y);
  s->externals = {{ScalarType::kFloat, {1, SizesType(k.h), SizesType(k.w), SizesType(k.in)}},
                  {ScalarType::kFloat, {1, SizesType(oh), SizesType(ow), SizesType(k.out)}}};
  s->event = "Inverted residual";
}

// ResNet's basic block on 8 channels: conv 3x3 + ReLU, conv 3x3, + input,
// ReLU (a Clamp node). conv2d takes its convolutions on the AVX2 routing.
void resnet_seed(Seed* s) {
  PayloadBuilder& b = s->builder;
  const uint32_t x = b.input({1, 6, 6, 8}, 0);
  const uint32_t a = b.internal({1, 6, 6, 8}), c = b.internal({1, 6, 6, 8});
  const uint32_t sum = b.internal({1, 6, 6, 8}), y = b.output({1, 6, 6, 8}, 1);
  Conv conv{8, 8, 3, 1, 1};
  conv.relu = true;
  add_conv(b, conv, x, a, 40);
  conv.relu = false;
  add_conv(b, conv, a, c, 42);
  add_binary(b, Kind::XNNAdd, c, x, sum);
  auto* r = b.node<fb::_XNNNode1x1T>(Kind::XNNClamp);
  r->input_id = sum, r->output_id = y;
  b.clamp_last(0.0f, INFINITY);
  s->externals = {{ScalarType::kFloat, {1, 6, 6, 8}}, {ScalarType::kFloat, {1, 6, 6, 8}}};
  s->event = "conv2d";
  s->stage_events = 2, s->all_events = 4;  // The add and the ReLU on XNNPACK.
}

// One 3x3 convolution that the AMX routing sends to conv2d: 64 outputs, a
// patch of 8 x 3 x 3 and 4.7M multiply-adds (32x32 pixels).
void conv_amx_seed(Seed* s) {
  PayloadBuilder& b = s->builder;
  const uint32_t x = b.input({1, 32, 32, 8}, 0), y = b.output({1, 32, 32, 64}, 1);
  add_conv(b, {8, 64, 3, 1, 1}, x, y, 50);
  b.clamp_last(0.0f, 6.0f);
  s->externals = {{ScalarType::kFloat, {1, 32, 32, 8}}, {ScalarType::kFloat, {1, 32, 32, 64}}};
  s->event = "conv2d";
  s->isa = optimized::GemmIsa::kAmx;
}

// One 3x3 convolution that the AVX-512 routing sends to conv2d: its filter,
// 256 -> 256 channels, is 2.25 MiB (the routing takes 2 MiB and more), on a
// 2x2 image (2.4M multiply-adds). The weights repeat a short pattern, so the
// 2.4 MB file is small in git; fuzz it with TORCHLIGHT_FUZZ_MAX_LEN=2400000
// (fuzz/xnnpack_mutator.cpp keeps mutations off the weights).
void conv_avx512_seed(Seed* s) {
  PayloadBuilder& b = s->builder;
  const uint32_t c = 256;
  const uint32_t x = b.input({1, 2, 2, c}, 0), y = b.output({1, 2, 2, c}, 1);
  std::vector<float> w(size_t{c} * 9 * c);
  for (size_t i = 0; i < w.size(); ++i) w[i] = 0.01f * static_cast<float>(int(i % 13) - 6);
  auto* n = b.node<fb::_XNNNodeConvT>(Kind::XNNConv2d);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 1;
  n->kernel_height = n->kernel_width = 3;
  n->subsampling_height = n->subsampling_width = 1;
  n->dilation_height = n->dilation_width = 1;
  n->groups = 1, n->group_input_channels = n->group_output_channels = c;
  n->input1_id = x, n->output_id = y, n->bias_id = kNone;
  n->filter_id = b.constant_f32({c, 3, 3, c}, w);
  s->externals = {{ScalarType::kFloat, {1, 2, 2, SizesType(c)}},
                  {ScalarType::kFloat, {1, 2, 2, SizesType(c)}}};
  s->event = "conv2d";
  s->isa = optimized::GemmIsa::kAvx512;
  s->max_len = 2400000;
}

// An int8 depthwise 3x3 (32 channels, stride 2) with a qint8 Clamp after it
// that the stage folds in.
void depthwise_seed(Seed* s) {
  PayloadBuilder& b = s->builder;
  const uint32_t c = 32;
  const uint32_t x = b.quantized(DT::xnn_datatype_qint8, {1, 7, 7, c}, per_tensor(0.05f, -3),
                                 /*flags=*/1, /*external_id=*/0);
  const uint32_t d = b.quantized(DT::xnn_datatype_qint8, {1, 4, 4, c}, per_tensor(0.1f, 4));
  const uint32_t y = b.quantized(DT::xnn_datatype_qint8, {1, 4, 4, c}, per_tensor(0.1f, 4),
                                 /*flags=*/2, /*external_id=*/1);
  std::vector<int8_t> w(9 * c);
  const auto wr = random_values(w.size(), 60);
  for (size_t i = 0; i < w.size(); ++i) w[i] = static_cast<int8_t>(std::lround(wr[i] * 40));
  std::vector<float> scales(c);
  std::vector<int32_t> bias(c);
  std::vector<float> bias_scales(c);
  for (uint32_t i = 0; i < c; ++i) {
    scales[i] = 0.002f + 0.0005f * static_cast<float>(i % 11);
    bias[i] = static_cast<int32_t>((i * 7919) % 2001) - 1000;
    bias_scales[i] = 0.05f * scales[i];
  }
  fb::XNNQuantParamsUnion wq = per_channel(scales);
  static_cast<fb::PerChannelQuantT*>(wq.value)->channel_dim = 3;
  const uint32_t filter = b.quantized(DT::xnn_datatype_qcint8, {1, 3, 3, c}, std::move(wq), 0,
                                      kNone, b.constant_bytes(w.data(), w.size()));
  const uint32_t bias_id = b.quantized(DT::xnn_datatype_qcint32, {c}, per_channel(bias_scales), 0,
                                       kNone, b.constant_bytes(bias.data(), bias.size() * 4));
  auto* n = b.node<fb::_XNNNodeConvT>(Kind::XNNDepthwiseConv2d);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 1;
  n->kernel_height = n->kernel_width = 3;
  n->subsampling_height = n->subsampling_width = 2;
  n->dilation_height = n->dilation_width = 1;
  n->groups = c, n->group_input_channels = n->group_output_channels = 1;
  n->input1_id = x, n->filter_id = filter, n->bias_id = bias_id, n->output_id = d;
  auto* clamp = b.node<fb::_XNNNode1x1T>(Kind::XNNClamp);
  clamp->input_id = d, clamp->output_id = y;
  b.clamp_last(0.0f, 6.0f);
  s->externals = {{ScalarType::kChar, {1, 7, 7, SizesType(c)}},
                  {ScalarType::kChar, {1, 4, 4, SizesType(c)}}};
  s->event = "depthwise_qs8";
  s->supported = depthwise_qs8_supported;
}

// qd8 x qb4w linear, group 32: float [3, 64] -> Convert (qdint8 per row)
// -> FullyConnected with 4-bit [16, 64] weights and a bias, clamped.
void linear_seed(Seed* s) {
  PayloadBuilder& b = s->builder;
  const uint32_t rows = 3, in = 64, out = 16, group = 32;
  std::vector<uint8_t> packed(out * in / 2);
  const auto wr = random_values(packed.size(), 70);
  for (size_t i = 0; i < packed.size(); ++i) packed[i] = static_cast<uint8_t>((wr[i] + 1.0f) * 127.5f);
  fb::XNNQuantParamsUnion wq;
  auto* q = new fb::PerChannelGroupQuantT();
  for (uint32_t i = 0; i < out * in / group; ++i) q->scale.push_back(0.01f * float(i % 7 + 1));
  q->channel_dim = 0, q->group_size = group;
  wq.type = fb::XNNQuantParams::PerChannelGroupQuant, wq.value = q;
  const uint32_t filter = b.quantized(DT::xnn_datatype_qbint4, {out, in}, std::move(wq), 0, kNone,
                                      b.constant_bytes(packed.data(), packed.size()));
  const uint32_t bias = b.constant_f32({out}, random_values(out, 71));
  const uint32_t xf = b.input({rows, in}, 0);
  const uint32_t xd = b.quantized(DT::xnn_datatype_qdint8, {rows, in}, per_token());
  const uint32_t y = b.output({rows, out}, 1);
  auto* cv = b.node<fb::_XNNNode1x1T>(Kind::XNNConvert);
  cv->input_id = xf, cv->output_id = xd;
  auto* fc = b.node<fb::XNNFullyConnectedT>(Kind::XNNFullyConnected);
  fc->input1_id = xd, fc->filter_id = filter, fc->bias_id = bias, fc->output_id = y;
  b.clamp_last(-0.5f, 0.5f);
  s->externals = {{ScalarType::kFloat, {SizesType(rows), SizesType(in)}},
                  {ScalarType::kFloat, {SizesType(rows), SizesType(out)}}};
  s->event = "linear_8da4w";
  s->supported = linears_leave_xnnpack;
}

std::vector<Seed> stage_seeds() {
  std::vector<Seed> seeds(8);
  seeds[0].file = "inverted_residual_folded_relu6.bin";
  block_seed(&seeds[0], BlockSeed{});
  seeds[1].file = "inverted_residual_clamp_nodes_stride2.bin";
  BlockSeed strided;
  strided.stride = 2, strided.residual = false, strided.clamp_nodes = true, strided.out = 12;
  block_seed(&seeds[1], strided);
  seeds[2].file = "inverted_residual_no_expand.bin";
  BlockSeed first;
  first.expand = false, first.in = 16, first.residual = false;
  block_seed(&seeds[2], first);
  seeds[3].file = "conv2d_3x3_amx.bin";
  conv_amx_seed(&seeds[3]);
  seeds[4].file = "resnet_basic_block.bin";
  resnet_seed(&seeds[4]);
  seeds[5].file = "depthwise_qs8_folded_clamp.bin";
  depthwise_seed(&seeds[5]);
  seeds[6].file = "linear_8da4w_group32.bin";
  linear_seed(&seeds[6]);
  seeds[7].file = "conv2d_3x3_avx512.bin";
  conv_avx512_seed(&seeds[7]);
  return seeds;
}

class XnnpackFuzzSeedTest : public ::testing::Test {
 protected:
  void TearDown() override { optimized::reset_gemm_isa(); }
};

TEST_F(XnnpackFuzzSeedTest, StageSeedsAreCheckedInAndReachTheirStage) {
  const bool write = std::getenv("XNN_FUZZ_WRITE_SEEDS") != nullptr;
  for (const Seed& seed : stage_seeds()) {
    SCOPED_TRACE(seed.file);
    const std::vector<uint8_t> payload = seed.builder.build();
    if (write) {
      std::ofstream(corpus_path(seed.file), std::ios::binary)
          .write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
    }
    // The fuzzer starts from the checked-in bytes: they must be these.
    EXPECT_TRUE(read_bytes(corpus_path(seed.file)) == payload)
        << "stale seed: rerun with XNN_FUZZ_WRITE_SEEDS=1";
    EXPECT_LE(payload.size(), seed.max_len);
    const bool routed = set_gemm_isa(seed.isa).ok() && (seed.supported == nullptr || seed.supported());
    DelegateEventNames events;
    {
      LoadedDelegate d(payload, xnnpack_backend(), &events);
      ASSERT_TRUE(d.status().ok()) << d.status().message();
      std::vector<OwnedTensor> tensors;
      std::vector<EValue> args;
      for (const auto& [type, sizes] : seed.externals) {
        Result<OwnedTensor> t = OwnedTensor::make(type, sizes);
        ASSERT_TRUE(t.ok());
        tensors.push_back(std::move(t.get()));
      }
      for (OwnedTensor& t : tensors) args.push_back(t.evalue());
      const Status s = d.execute(args);
      ASSERT_TRUE(s.ok()) << s.message();
    }
    if (routed) {
      // Folded clamps and skipped converts leave no event of their own.
      EXPECT_EQ(events.count_containing(seed.event), seed.stage_events)
          << ::testing::PrintToString(events.names);
      EXPECT_EQ(events.names.size(), seed.all_events) << ::testing::PrintToString(events.names);
    }
    optimized::reset_gemm_isa();
  }
}

TEST_F(XnnpackFuzzSeedTest, StageSeedsWithEveryByteFlipped) {
  // On the routing each seed was made for, so the flips reach its stage.
  for (const Seed& seed : stage_seeds()) {
    SCOPED_TRACE(seed.file);
    (void)set_gemm_isa(seed.isa);
    replay_with_flips(seed.builder.build());
    optimized::reset_gemm_isa();
  }
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
