// Replays payloads through the fuzz target (fuzz_xnnpack_payload.cpp) in
// ordinary release and ASan builds: upstream's MLP payload, payloads built
// here for several node kinds, and every single-byte inversion of each
// one's header and flatbuffer.
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

#include "backends/xnnpack/payload_builder.h"

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

TEST(XnnpackFuzzTest, SeedCorpusPayload) {
  const std::string path =
      std::string(TORCHLIGHT_SOURCE_DIR) + "/fuzz/corpus/xnnpack_payload/mlp_xnnpack_payload.bin";
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in.good()) << path;
  std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
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

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
