// Dataflow checks at init: which values nodes may write, that every node's
// result is read, and the bound on declared activation bytes. Each case is
// a payload XNNPACK itself mishandles (abort in xnn_create_runtime_v3, or a
// multi-GiB workspace) that init must refuse with a named error.
#include <cstdint>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::testing::HasSubstr;

// x[2,16] -> fc1(W1[32,16], b1) -> h[2,32] -> fc2(W2[4,32], b2) -> z[2,4]
struct TwoLinears {
  PayloadBuilder b;
  uint32_t x, w1, b1, h, w2, b2, z;
  fb::XNNFullyConnectedT* fc1;
  fb::XNNFullyConnectedT* fc2;
  explicit TwoLinears(bool z_is_output = true) {
    x = b.input({2, 16}, 0);
    w1 = b.constant_f32({32, 16}, random_values(32 * 16, 1));
    b1 = b.constant_f32({32}, random_values(32, 2));
    h = b.internal({2, 32});
    w2 = b.constant_f32({4, 32}, random_values(4 * 32, 3));
    b2 = b.constant_f32({4}, random_values(4, 4));
    z = z_is_output ? b.output({2, 4}, 1) : b.internal({2, 4});
    fc1 = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc1->input1_id = x, fc1->filter_id = w1, fc1->bias_id = b1, fc1->output_id = h;
    fc2 = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc2->input1_id = h, fc2->filter_id = w2, fc2->bias_id = b2, fc2->output_id = z;
  }
};

void expect_error(const std::vector<uint8_t>& payload, const char* text,
                  const XnnpackBackend& backend = xnnpack_backend()) {
  LoadedDelegate d(payload, backend);
  EXPECT_EQ(d.status().code(), Error::kInvalidProgram) << d.status().message();
  EXPECT_THAT(d.status().message(), HasSubstr(text));
}

TEST(XnnpackDataflowTest, ChainLoadsAndMatchesReference) {
  TwoLinears g;
  LoadedDelegate d(g.b.build());
  ASSERT_TRUE(d.status().ok()) << d.status().message();
  const std::vector<float> xs = random_values(32, 5);
  OwnedTensor x = float_tensor({2, 16}, xs);
  OwnedTensor z = float_tensor({2, 4});
  ASSERT_TRUE(d.execute({x.evalue(), z.evalue()}).ok());
  const std::vector<float> w1 = random_values(32 * 16, 1), b1 = random_values(32, 2);
  const std::vector<float> w2 = random_values(4 * 32, 3), b2 = random_values(4, 4);
  const std::vector<float> got = values_of(z);
  for (int r = 0; r < 2; ++r) {
    float h[32];
    for (int o = 0; o < 32; ++o) {
      double acc = b1[o];
      for (int i = 0; i < 16; ++i) acc += double(xs[r * 16 + i]) * w1[o * 16 + i];
      h[o] = static_cast<float>(acc);
    }
    for (int o = 0; o < 4; ++o) {
      double acc = b2[o];
      for (int i = 0; i < 32; ++i) acc += double(h[i]) * w2[o * 32 + i];
      EXPECT_NEAR(got[r * 4 + o], acc, 1e-4 * (1 + std::abs(acc))) << r << "," << o;
    }
  }
}

// fuzz/regressions/xnnpack_payload/crash-480d222d…: the last node's result
// is internal and unread. XNNPACK drops that node but keeps counting its read
// of h, and xnn_subgraph_fusion aborts on the dropped consumer.
TEST(XnnpackDataflowTest, NodeWhoseResultNobodyReadsIsRefused) {
  TwoLinears g(/*z_is_output=*/false);
  expect_error(g.b.build(), "node 1 (XNNFullyConnected): no node reads its output");
}

TEST(XnnpackDataflowTest, GraphOutputNoNodeWritesIsRefused) {
  TwoLinears g;
  g.fc2->output_id = g.b.internal({2, 4});
  expect_error(g.b.build(), "is a graph output, but no node writes it");
}

// fuzz/regressions/xnnpack_payload/oom-…: a node writing a constant.
TEST(XnnpackDataflowTest, NodeWritingAConstantIsRefused) {
  TwoLinears g;
  g.fc1->output_id = g.b1;
  expect_error(g.b.build(), "which is a constant and cannot be written");
}

TEST(XnnpackDataflowTest, NodeWritingAGraphInputIsRefused) {
  TwoLinears g;
  g.fc2->output_id = g.x;
  expect_error(g.b.build(), "which is a graph input and cannot be written");
}

TEST(XnnpackDataflowTest, TwoNodesWritingOneValueAreRefused) {
  TwoLinears g;
  auto* again = g.b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  again->input1_id = g.h, again->filter_id = g.w2, again->bias_id = g.b2, again->output_id = g.z;
  expect_error(g.b.build(), "which node 1 already writes");
}

// fuzz/regressions/xnnpack_payload/oom-…: large internal values made XNNPACK
// allocate a 2 GiB workspace; their declared bytes are bounded at init.
TEST(XnnpackDataflowTest, ActivationBytesAboveTheBackendBoundAreRefused) {
  TwoLinears g;
  const std::vector<uint8_t> payload = g.b.build();
  // x 128 + h 256 + z 32 bytes = 416 bytes of non-constant values.
  const XnnpackBackend exact(416);
  LoadedDelegate fits(payload, exact);
  EXPECT_TRUE(fits.status().ok()) << fits.status().message();
  const XnnpackBackend small(415);
  expect_error(payload, "declare 416 bytes of tensors besides constants; the limit is 415",
               small);
}

TEST(XnnpackDataflowTest, DefaultBoundRefusesHugeInternalValue) {
  TwoLinears g;
  // 3 x 2^30 fp32 = 12 GiB: under the 16 GiB per-value limit, over the
  // default 8 GiB total.
  auto* h = static_cast<fb::XNNTensorValueT*>(g.b.graph.xvalues[g.h]->xvalue_union.value);
  h->dims = {3, 1u << 30};
  expect_error(g.b.build(), "bytes of tensors besides constants; the limit is 8589934592");
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
