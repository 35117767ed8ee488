// The packed-weights cache one XnnpackBackend shares between its delegates:
// two methods holding the same weights (in separate payloads, as two
// methods of one program are) pack them once; different weights, or the
// same int8 weights under other scales, are packed separately; results stay
// those of an uncached delegate.
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/packed_weights_cache.h"
#include "backends/xnnpack/payload_builder.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using DT = fb::XNNDatatype;

// x[3,16] -> fc1(W1[32,16], b1) -> relu-clamped h -> fc2(W2[8,32], b2) -> y[3,8]
std::vector<uint8_t> mlp(uint32_t weight_seed) {
  PayloadBuilder b;
  const uint32_t x = b.input({3, 16}, 0);
  const uint32_t w1 = b.constant_f32({32, 16}, random_values(32 * 16, weight_seed));
  const uint32_t b1 = b.constant_f32({32}, random_values(32, weight_seed + 1));
  const uint32_t h = b.internal({3, 32});
  const uint32_t w2 = b.constant_f32({8, 32}, random_values(8 * 32, weight_seed + 2));
  const uint32_t b2 = b.constant_f32({8}, random_values(8, weight_seed + 3));
  const uint32_t y = b.output({3, 8}, 1);
  auto* fc1 = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc1->input1_id = x, fc1->filter_id = w1, fc1->bias_id = b1, fc1->output_id = h;
  b.clamp_last(0.0f, INFINITY);
  auto* fc2 = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc2->input1_id = h, fc2->filter_id = w2, fc2->bias_id = b2, fc2->output_id = y;
  return b.build();
}

std::vector<float> run(LoadedDelegate& d) {
  OwnedTensor x = float_tensor({3, 16}, random_values(48, 99));
  OwnedTensor y = float_tensor({3, 8});
  Status s = d.execute({x.evalue(), y.evalue()});
  EXPECT_TRUE(s.ok()) << s.message();
  return values_of(y);
}

TEST(XnnpackWeightsCacheTest, TwoDelegatesWithTheSameWeightsPackOnce) {
  const XnnpackBackend backend;
  PackedWeightsCache* cache = backend.weights_cache();
  ASSERT_NE(cache, nullptr);
  // Two payloads (as two methods of one program), byte-identical weights at
  // different addresses.
  const std::vector<uint8_t> forward = mlp(1), other_method = mlp(1);
  auto first = std::make_unique<LoadedDelegate>(forward, backend);
  ASSERT_TRUE(first->status().ok()) << first->status().message();
  const size_t packed = cache->entries();
  const size_t bytes = cache->bytes();
  EXPECT_EQ(packed, 2u);  // fc1's and fc2's weights.
  EXPECT_GT(bytes, (32 * 16 + 8 * 32) * sizeof(float));
  EXPECT_EQ(cache->hits(), 0u);

  LoadedDelegate second(other_method, backend);
  ASSERT_TRUE(second.status().ok()) << second.status().message();
  EXPECT_EQ(cache->entries(), packed);
  EXPECT_EQ(cache->bytes(), bytes);
  EXPECT_EQ(cache->hits(), 2u);

  // Same answers as a delegate of a backend whose cache never saw them.
  const XnnpackBackend fresh;
  LoadedDelegate alone(forward, fresh);
  const std::vector<float> want = run(alone);
  EXPECT_EQ(run(*first), want);
  EXPECT_EQ(run(second), want);

  // The second delegate keeps the shared weights alive after the first goes.
  first.reset();
  EXPECT_EQ(cache->entries(), packed);
  EXPECT_EQ(run(second), want);
}

TEST(XnnpackWeightsCacheTest, DifferentWeightsArePackedSeparately) {
  const XnnpackBackend backend;
  PackedWeightsCache* cache = backend.weights_cache();
  const std::vector<uint8_t> a = mlp(1), b = mlp(7);
  LoadedDelegate da(a, backend);
  LoadedDelegate db(b, backend);
  ASSERT_TRUE(da.status().ok() && db.status().ok());
  EXPECT_EQ(cache->entries(), 4u);
  EXPECT_EQ(cache->hits(), 0u);
  const XnnpackBackend fresh;
  LoadedDelegate alone_b(b, fresh);
  EXPECT_EQ(run(db), run(alone_b));
  EXPECT_NE(run(da), run(db));
}

TEST(XnnpackWeightsCacheTest, EntriesAreFreedWithTheLastDelegate) {
  const XnnpackBackend backend;
  const std::vector<uint8_t> a = mlp(1);
  {
    LoadedDelegate d(a, backend);
    ASSERT_TRUE(d.status().ok());
    EXPECT_EQ(backend.weights_cache()->entries(), 2u);
  }
  EXPECT_EQ(backend.weights_cache()->entries(), 0u);
  EXPECT_EQ(backend.weights_cache()->bytes(), 0u);
}

// int8 per-channel weights: XNNPACK packs the scales with them, so equal
// bytes under other scales must not share.
std::vector<uint8_t> dynamic_linear(const std::vector<float>& scales) {
  const size_t in = 16, out = 4;
  std::vector<int8_t> wq(out * in);
  const auto wr = random_values(out * in, 5);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(std::lround(wr[i] * 127));
  PayloadBuilder b;
  const uint32_t wi = b.constant_bytes(wq.data(), wq.size());
  fb::XNNQuantParamsUnion channel;
  auto* qc = new fb::PerChannelQuantT();
  qc->scale = scales;
  qc->channel_dim = 0;
  channel.type = fb::XNNQuantParams::PerChannelQuant;
  channel.value = qc;
  const uint32_t filter = b.quantized(DT::xnn_datatype_qcint8, {4, 16}, std::move(channel), 0,
                                      kNone, wi);
  fb::XNNQuantParamsUnion token;
  auto* qt = new fb::PerTokenDynamicQuantT();
  qt->num_nonbatch_dims = 1;
  token.type = fb::XNNQuantParams::PerTokenDynamicQuant;
  token.value = qt;
  const uint32_t xf = b.input({3, 16}, 0);
  const uint32_t xd = b.quantized(DT::xnn_datatype_qdint8, {3, 16}, std::move(token));
  const uint32_t bias = b.constant_f32({4}, random_values(4, 6));
  const uint32_t y = b.output({3, 4}, 1);
  auto* cv = b.node<fb::_XNNNode1x1T>(fb::XNodeUnion::XNNConvert);
  cv->input_id = xf, cv->output_id = xd;
  auto* fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc->input1_id = xd, fc->filter_id = filter, fc->bias_id = bias, fc->output_id = y;
  return b.build();
}

std::vector<float> run_linear(LoadedDelegate& d) {
  OwnedTensor x = float_tensor({3, 16}, random_values(48, 8));
  OwnedTensor y = float_tensor({3, 4});
  Status s = d.execute({x.evalue(), y.evalue()});
  EXPECT_TRUE(s.ok()) << s.message();
  return values_of(y);
}

TEST(XnnpackWeightsCacheTest, SameInt8WeightsUnderOtherScalesAreNotShared) {
  const XnnpackBackend backend;
  PackedWeightsCache* cache = backend.weights_cache();
  const std::vector<uint8_t> a = dynamic_linear({0.01f, 0.02f, 0.03f, 0.04f});
  const std::vector<uint8_t> same = dynamic_linear({0.01f, 0.02f, 0.03f, 0.04f});
  const std::vector<uint8_t> other = dynamic_linear({0.04f, 0.03f, 0.02f, 0.01f});
  LoadedDelegate da(a, backend);
  ASSERT_TRUE(da.status().ok()) << da.status().message();
  const size_t packed = cache->entries();
  EXPECT_GE(packed, 1u);
  LoadedDelegate dsame(same, backend);
  ASSERT_TRUE(dsame.status().ok());
  EXPECT_EQ(cache->entries(), packed);
  EXPECT_GE(cache->hits(), 1u);
  LoadedDelegate dother(other, backend);
  ASSERT_TRUE(dother.status().ok());
  EXPECT_GT(cache->entries(), packed);

  const XnnpackBackend fresh;
  LoadedDelegate alone_other(other, fresh);
  EXPECT_EQ(run_linear(dother), run_linear(alone_other));
  EXPECT_EQ(run_linear(dsame), run_linear(da));
  EXPECT_NE(run_linear(dother), run_linear(da));
}

TEST(XnnpackWeightsCacheTest, SipHashMatchesTheReferenceVector) {
  // SipHash-2-4 paper, appendix A: key 00..0f, message 00..0e.
  const uint64_t key[2] = {0x0706050403020100ull, 0x0f0e0d0c0b0a0908ull};
  uint8_t message[15];
  for (int i = 0; i < 15; ++i) message[i] = static_cast<uint8_t>(i);
  EXPECT_EQ(siphash24(message, sizeof(message), key), 0xa129ca6149be45e5ull);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
