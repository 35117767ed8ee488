// Malformed XNNPACK payloads: each gives a named error at init, never a
// crash (run under ASan/UBSan too).
#include <cmath>
#include <cstring>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"
#include "runtime/core/testing/error_matchers.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::torchlight::testing::ErrorIs;

using ::testing::HasSubstr;

// x[2,4] -> fc(W[3,4], b[3]) -> y[2,3]
struct Linear {
  PayloadBuilder b;
  uint32_t x, w, bias, y;
  fb::XNNFullyConnectedT* fc;
  Linear() {
    x = b.input({2, 4}, 0);
    w = b.constant_f32({3, 4}, random_values(12, 1));
    bias = b.constant_f32({3}, random_values(3, 2));
    y = b.output({2, 3}, 1);
    fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc->input1_id = x, fc->filter_id = w, fc->bias_id = bias, fc->output_id = y;
  }
  fb::XNNTensorValueT* tensor(uint32_t id) {
    return static_cast<fb::XNNTensorValueT*>(b.graph.xvalues[id]->xvalue_union.value);
  }
};

Status init_status(const std::vector<uint8_t>& payload) {
  LoadedDelegate d(payload);
  return d.status();
}

void expect_error(const std::vector<uint8_t>& payload, Error code, const char* text) {
  Status s = init_status(payload);
  EXPECT_EQ(s.code(), code) << s.message();
  EXPECT_THAT(s.message(), HasSubstr(text));
}

TEST(XnnpackMalformedTest, ValidLinearLoads) {
  Linear l;
  EXPECT_TRUE(init_status(l.b.build()).ok());
}

TEST(XnnpackMalformedTest, MisalignedFloatConstant) {
  // The filter's floats start 2 bytes into the constant region's slot: the
  // stages (and XNNPACK's packing) would read misaligned floats.
  Linear l;
  const uint32_t index = l.tensor(l.w)->constant_buffer_idx;
  l.b.graph.constant_data[index]->offset += 2;
  expect_error(l.b.build(), Error::kInvalidProgram, "constant 1's data is not 4-byte aligned");
}

TEST(XnnpackMalformedTest, TooShortPayload) {
  expect_error(std::vector<uint8_t>(12, 0), Error::kDelegateInvalidCompatibility, "12 bytes");
}

TEST(XnnpackMalformedTest, FlatbufferOutsidePayload) {
  Linear l;
  auto p = l.b.build();
  p[14] = 0xff, p[15] = 0xff;  // flatbuffer_size
  expect_error(p, Error::kInvalidProgram, "flatbuffer at");
}

TEST(XnnpackMalformedTest, ConstantRegionOutsidePayload) {
  Linear l;
  auto p = l.b.build();
  p[22 + 3] = 0x01;  // constant_data_size += 16 MiB
  expect_error(p, Error::kInvalidProgram, "constants at");
}

TEST(XnnpackMalformedTest, UnknownIdentifier) {
  Linear l;
  auto p = l.b.build();
  std::memcpy(&p[32 + 4], "XN99", 4);
  expect_error(p, Error::kDelegateInvalidCompatibility, "identifier is 'XN99'");
}

TEST(XnnpackMalformedTest, EveryTruncationFailsCleanly) {
  Linear l;
  // With a header, the sizes it records catch every cut.
  const auto full = l.b.build();
  for (size_t n = 0; n < full.size(); ++n) {
    std::vector<uint8_t> cut(full.begin(), full.begin() + n);
    EXPECT_FALSE(init_status(cut).ok()) << "prefix of " << n << " bytes loaded";
  }
  // A bare flatbuffer may end in padding nothing points at; all other cuts
  // fail the Verifier.
  const auto legacy = l.b.build_legacy();
  size_t loaded = 0;
  for (size_t n = 0; n < legacy.size(); ++n) {
    std::vector<uint8_t> cut(legacy.begin(), legacy.begin() + n);
    if (init_status(cut).ok()) ++loaded;
  }
  EXPECT_LE(loaded, 4u);
}

TEST(XnnpackMalformedTest, EveryFlippedByteFailsCleanlyOrLoads) {
  // A cheap stand-in for fuzzing: each byte inverted in turn must give a
  // Status (either outcome), never a crash or a sanitizer report.
  Linear l;
  const auto full = l.b.build();
  size_t rejected = 0;
  for (size_t i = 0; i < full.size(); ++i) {
    auto p = full;
    p[i] ^= 0xff;
    if (!init_status(p).ok()) ++rejected;
  }
  EXPECT_GT(rejected, 0u);
}

TEST(XnnpackMalformedTest, NodeReferencesMissingValue) {
  Linear l;
  l.fc->filter_id = 99;
  expect_error(l.b.build(), Error::kInvalidProgram, "filter is value 99");
}

TEST(XnnpackMalformedTest, UnknownNodeKind) {
  Linear l;
  l.b.graph.xnodes[0]->xnode_union.Reset();
  l.b.graph.xnodes[0]->xnode_union.type = static_cast<fb::XNodeUnion>(200);
  expect_error(l.b.build(), Error::kInvalidProgram, "unknown kind 200");
}

TEST(XnnpackMalformedTest, UnknownDatatype) {
  Linear l;
  l.tensor(l.y)->datatype = static_cast<fb::XNNDatatype>(77);
  expect_error(l.b.build(), Error::kInvalidProgram, "unknown datatype 77");
}

TEST(XnnpackMalformedTest, DuplicateValueId) {
  Linear l;
  l.tensor(l.y)->id_out = l.x;
  expect_error(l.b.build(), Error::kInvalidProgram, "ids must be unique");
}

TEST(XnnpackMalformedTest, ExternalIdBeyondNumExterns) {
  Linear l;
  l.tensor(l.y)->external_id = 5;
  expect_error(l.b.build(), Error::kInvalidProgram, "external id 5");
}

TEST(XnnpackMalformedTest, UnknownValueFlags) {
  Linear l;
  l.tensor(l.y)->flags = 3;
  expect_error(l.b.build(), Error::kInvalidProgram, "flags 0x3");
}

TEST(XnnpackMalformedTest, ConstantOffsetOutsideRegion) {
  Linear l;
  l.b.graph.constant_data[1]->offset = 1u << 20;
  expect_error(l.b.build(), Error::kInvalidProgram, "outside the");
}

TEST(XnnpackMalformedTest, ConstantSmallerThanItsShape) {
  Linear l;
  l.tensor(l.w)->dims = {3, 40};
  l.tensor(l.w)->num_dims = 2;
  expect_error(l.b.build(), Error::kInvalidProgram, "its shape needs 480");
}

TEST(XnnpackMalformedTest, ConstantIndexBeyondList) {
  Linear l;
  l.tensor(l.bias)->constant_buffer_idx = 9;
  expect_error(l.b.build(), Error::kInvalidProgram, "uses constant 9");
}

TEST(XnnpackMalformedTest, NumDimsDisagreesWithDims) {
  Linear l;
  l.tensor(l.x)->num_dims = 3;
  expect_error(l.b.build(), Error::kInvalidProgram, "num_dims 3");
}

TEST(XnnpackMalformedTest, TooManyDims) {
  Linear l;
  l.tensor(l.x)->dims = {1, 1, 1, 1, 1, 2, 4};
  l.tensor(l.x)->num_dims = 7;
  expect_error(l.b.build(), Error::kInvalidProgram, "7 dims");
}

TEST(XnnpackMalformedTest, NamedDataConstantWithoutNamedData) {
  Linear l;
  l.b.graph.constant_data[1]->named_key = "abc123";
  expect_error(l.b.build(), Error::kInvalidProgram, "named data 'abc123'");
}

TEST(XnnpackMalformedTest, NodeXnnpackRejectsIsNamed) {
  Linear l;
  // fp32 input and weights with an fp16 output is no valid combination.
  l.tensor(l.y)->datatype = fb::XNNDatatype::xnn_datatype_fp16;
  Status s = init_status(l.b.build());
  EXPECT_THAT(s, ErrorIs(Error::kInvalidProgram, "XNNPACK node 0 (XNNFullyConnected)"));
}

TEST(XnnpackMalformedTest, FilterShapeDisagreeingWithNodeIsNamed) {
  Linear l;
  l.tensor(l.w)->dims = {12};  // A fully-connected filter must be 2-d.
  l.tensor(l.w)->num_dims = 1;
  expect_error(l.b.build(), Error::kInvalidProgram, "filter must be 2-d");
  Linear wide;
  wide.tensor(wide.x)->dims = {2, 5};  // The filter expects 4 features.
  expect_error(wide.b.build(), Error::kInvalidProgram, "input has 5 features");
  Linear bias;
  bias.tensor(bias.bias)->dims = {2};
  expect_error(bias.b.build(), Error::kInvalidProgram, "bias has dims [2]");
}

TEST(XnnpackMalformedTest, ConvolutionChannelsBeyondFilterAreRejected) {
  // XNNPACK would pack 9 * 1000 * 3 weights from a 3x3x3x2 filter.
  PayloadBuilder b;
  const uint32_t x = b.input({1, 4, 4, 2}, 0);
  const uint32_t w = b.constant_f32({3, 3, 3, 2}, random_values(54, 1));
  const uint32_t y = b.output({1, 4, 4, 3}, 1);
  auto* c = b.node<fb::_XNNNodeConvT>(fb::XNodeUnion::XNNConv2d);
  c->kernel_height = c->kernel_width = 3;
  c->subsampling_height = c->subsampling_width = c->dilation_height = c->dilation_width = 1;
  c->groups = 1, c->group_input_channels = 1000, c->group_output_channels = 3;
  c->input1_id = x, c->filter_id = w, c->bias_id = kNone, c->output_id = y;
  expect_error(b.build(), Error::kInvalidProgram, "filter has dims [3,3,3,2]");
}

TEST(XnnpackMalformedTest, ZeroPointOutOfRange) {
  PayloadBuilder b;
  b.quantized(fb::XNNDatatype::xnn_datatype_qint8, {4}, per_tensor(0.5f, 300), 1, 0);
  expect_error(b.build(), Error::kInvalidProgram, "zero point 300");
}

TEST(XnnpackMalformedTest, NonPositiveScale) {
  PayloadBuilder b;
  b.quantized(fb::XNNDatatype::xnn_datatype_qint8, {4}, per_tensor(-1.0f, 0), 1, 0);
  expect_error(b.build(), Error::kInvalidProgram, "scale -1");
}

TEST(XnnpackMalformedTest, QuantizedDatatypeWithoutParameters) {
  PayloadBuilder b;
  b.input({4}, 0, fb::XNNDatatype::xnn_datatype_qint8);
  expect_error(b.build(), Error::kInvalidProgram, "needs quantization parameters");
}

TEST(XnnpackMalformedTest, PerChannelScaleCountMismatch) {
  PayloadBuilder b;
  std::vector<int8_t> w(12, 1);
  const uint32_t idx = b.constant_bytes(w.data(), w.size());
  fb::XNNQuantParamsUnion u;
  auto* q = new fb::PerChannelQuantT();
  q->scale = {0.1f, 0.2f};  // 3 channels
  q->channel_dim = 0;
  u.type = fb::XNNQuantParams::PerChannelQuant;
  u.value = q;
  b.quantized(fb::XNNDatatype::xnn_datatype_qcint8, {3, 4}, std::move(u), 0, kNone, idx);
  expect_error(b.build(), Error::kInvalidProgram, "2 per-channel scales for 3 channels");
}

TEST(XnnpackMalformedTest, BlockwiseGroupMustDivideInputs) {
  PayloadBuilder b;
  std::vector<uint8_t> w(4 * 32, 0x88);
  const uint32_t idx = b.constant_bytes(w.data(), w.size());
  fb::XNNQuantParamsUnion u;
  auto* q = new fb::PerChannelGroupQuantT();
  q->scale.assign(4, 0.1f);
  q->channel_dim = 0;
  q->group_size = 48;
  u.type = fb::XNNQuantParams::PerChannelGroupQuant;
  u.value = q;
  b.quantized(fb::XNNDatatype::xnn_datatype_qbint4, {4, 64}, std::move(u), 0, kNone, idx);
  expect_error(b.build(), Error::kInvalidProgram, "group size 48");
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
