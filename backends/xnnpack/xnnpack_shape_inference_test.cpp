// shape_inference.h: the shape the delegate infers for each node's output is
// the one XNNPACK computes (checked against XNNPACK itself: the resized
// output of a run), and nodes whose declared output contradicts it are
// refused, naming the node, its kind, the value and both shapes.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <string>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <xnnpack.h>

#include "backends/xnnpack/payload_builder.h"
#include "backends/xnnpack/xnnpack_backend.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::testing::HasSubstr;
using Dims = std::vector<uint32_t>;
using K = fb::XNodeUnion;

// One node (or a few) from fp32 external inputs to one fp32 output, and
// the output shape XNNPACK's documented rules give (worked out by hand).
struct OracleCase {
  std::string name;
  std::vector<Dims> inputs;
  Dims expected;
  // Adds the nodes reading `in` and writing `out`.
  std::function<void(PayloadBuilder&, const std::vector<uint32_t>& in, uint32_t out)> nodes;
};

std::vector<uint8_t> build(const OracleCase& c, const Dims& out_dims) {
  PayloadBuilder b;
  std::vector<uint32_t> in;
  for (size_t i = 0; i < c.inputs.size(); ++i) in.push_back(b.input(c.inputs[i], i));
  const uint32_t out = b.output(out_dims, static_cast<uint32_t>(c.inputs.size()));
  c.nodes(b, in, out);
  return b.build();
}

void unary(PayloadBuilder& b, K kind, uint32_t in, uint32_t out, uint32_t flags = 0) {
  auto* n = b.node<fb::_XNNNode1x1T>(kind);
  n->input_id = in, n->output_id = out, n->flags = flags;
}

void fully_connected(PayloadBuilder& b, uint32_t x, Dims w_dims, uint32_t out, uint32_t flags) {
  const uint32_t w = b.constant_f32(w_dims, random_values(w_dims[0] * w_dims[1], 3));
  auto* n = b.node<fb::XNNFullyConnectedT>(K::XNNFullyConnected);
  n->input1_id = x, n->filter_id = w, n->bias_id = kNone, n->output_id = out, n->flags = flags;
}

fb::_XNNNodeConvT* last_conv(PayloadBuilder& b) {
  return static_cast<fb::_XNNNodeConvT*>(b.graph.xnodes.back()->xnode_union.value);
}

// A 3x3 window padded by 1 all round, of `kind`, with constant filter `w`.
fb::_XNNNodeConvT* conv_3x3(PayloadBuilder& b, K kind, uint32_t in, uint32_t w, uint32_t out,
                            uint32_t stride, uint32_t groups, uint32_t gic, uint32_t goc) {
  auto* n = b.node<fb::_XNNNodeConvT>(kind);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 1;
  n->kernel_height = n->kernel_width = 3;
  n->subsampling_height = n->subsampling_width = stride;
  n->dilation_height = n->dilation_width = 1;
  n->groups = groups, n->group_input_channels = gic, n->group_output_channels = goc;
  n->input1_id = in, n->filter_id = w, n->bias_id = kNone, n->output_id = out;
  return n;
}

void pooling(PayloadBuilder& b, K kind, uint32_t in, uint32_t out, uint32_t k, uint32_t stride,
             uint32_t pad, uint32_t dilation, uint32_t flags = 0) {
  auto* n = b.node<fb::_XNNPooling2DT>(kind);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = pad;
  n->pooling_height = n->pooling_width = k;
  n->stride_height = n->stride_width = stride;
  n->dilation_height = n->dilation_width = dilation;
  n->input_id = in, n->output_id = out, n->flags = flags;
}

void concat(PayloadBuilder& b, K kind, uint32_t axis, const std::vector<uint32_t>& in,
            uint32_t out) {
  auto* n = b.node<fb::_XNNCatT>(kind);
  n->axis = axis;
  uint32_t* ids[5] = {&n->input1_id, &n->input2_id, &n->input3_id, &n->input4_id, &n->input5_id};
  for (size_t i = 0; i < 5; ++i) *ids[i] = i < in.size() ? in[i] : kNone;
  n->output_id = out;
}

std::vector<OracleCase> oracle_cases() {
  std::vector<OracleCase> cases;
  auto add = [&](std::string name, std::vector<Dims> inputs, Dims expected,
                 std::function<void(PayloadBuilder&, const std::vector<uint32_t>&, uint32_t)> f) {
    cases.push_back({std::move(name), std::move(inputs), std::move(expected), std::move(f)});
  };
  for (K kind : {K::XNNSigmoid, K::XNNClamp, K::XNNCopy, K::XNNSoftmax, K::XNNTanh}) {
    add(fb::EnumNameXNodeUnion(kind), {{2, 3, 5}}, {2, 3, 5},
        [kind](PayloadBuilder& b, const std::vector<uint32_t>& in, uint32_t out) {
          unary(b, kind, in[0], out);
        });
  }
  add("leaky relu", {{4, 6}}, {4, 6}, [](PayloadBuilder& b, const auto& in, uint32_t out) {
    auto* n = b.node<fb::XNNLeakyReLUT>(K::XNNLeakyReLU);
    n->negative_slope = 0.1f, n->input_id = in[0], n->output_id = out;
  });
  add("add broadcast", {{4, 1, 3}, {5, 1}}, {4, 5, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNAdd, in[0], in[1], out);
      });
  add("prelu slope per channel", {{1, 4, 4, 3}, {3}}, {1, 4, 4, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNPReLU, in[0], in[1], out);
      });
  add("batch matmul", {{2, 3, 4}, {2, 4, 5}}, {2, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNBatchMatrixMultiply, in[0], in[1], out);
      });
  add("batch matmul, B transposed", {{2, 3, 4}, {2, 5, 4}}, {2, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNBatchMatrixMultiply, in[0], in[1], out);
        static_cast<fb::_XNNNode2x1T*>(b.graph.xnodes.back()->xnode_union.value)->flags =
            XNN_FLAG_TRANSPOSE_B;
      });
  add("fully-connected, 3-d input", {{2, 3, 4}}, {2, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        fully_connected(b, in[0], {5, 4}, out, 0);
      });
  add("fully-connected, weights transposed", {{3, 4}}, {3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        fully_connected(b, in[0], {4, 5}, out, XNN_FLAG_TRANSPOSE_WEIGHTS);
      });
  add("fully-connected, reshape 2d", {{2, 3, 6}}, {6, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        fully_connected(b, in[0], {5, 6}, out, XNN_FLAG_TENSORFLOW_RESHAPE_2D);
      });
  add("conv stride 2 pad 1", {{1, 9, 7, 3}}, {1, 5, 4, 8},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_conv(b, {3, 8, 3, 2, 1}, in[0], out, 5);
      });
  add("conv dilation 2", {{1, 9, 7, 3}}, {1, 5, 3, 8},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_conv(b, {3, 8, 3, 1, 0, 2}, in[0], out, 5);
      });
  add("conv same padding stride 3", {{1, 9, 7, 3}}, {1, 3, 3, 8},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_conv(b, {3, 8, 3, 3, 0}, in[0], out, 5);
        last_conv(b)->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
      });
  add("conv uneven padding", {{1, 6, 6, 2}}, {1, 9, 5, 4},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_conv(b, {2, 4, 2, 1, 0}, in[0], out, 5);
        auto* n = last_conv(b);
        n->padding_top = 3, n->padding_bottom = 1, n->padding_left = 0, n->padding_right = 0;
      });
  add("depthwise multiplier 2", {{1, 6, 6, 4}}, {1, 6, 6, 8},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        const uint32_t w = b.constant_f32({1, 3, 3, 8}, random_values(72, 6));
        conv_3x3(b, K::XNNDepthwiseConv2d, in[0], w, out, 1, 4, 1, 2);
      });
  add("transposed conv stride 2", {{1, 3, 4, 2}}, {1, 6, 8, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        const uint32_t w = b.constant_f32({5, 3, 3, 2}, random_values(90, 7));
        auto* n = conv_3x3(b, K::XNNConvTranspose2d, in[0], w, out, 2, 1, 2, 5);
        n->adjustment_height = n->adjustment_width = 1;
      });
  add("average pooling pad 1", {{1, 7, 7, 3}}, {1, 4, 4, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        pooling(b, K::XNNAvgPooling2d, in[0], out, 3, 2, 1, 1);
      });
  add("average pooling same padding", {{1, 7, 8, 3}}, {1, 3, 3, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        pooling(b, K::XNNAvgPooling2d, in[0], out, 3, 3, 0, 1, XNN_FLAG_TENSORFLOW_SAME_PADDING);
      });
  add("max pooling dilation 2", {{1, 8, 8, 2}}, {1, 3, 3, 2},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        pooling(b, K::XNNMaxPooling2d, in[0], out, 2, 2, 0, 2, XNN_FLAG_KEEP_DIMS);
      });
  add("global average pooling, dims kept", {{1, 5, 6, 3}}, {1, 1, 1, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        unary(b, K::XNNGlobalAvgPooling2d, in[0], out, XNN_FLAG_KEEP_DIMS);
      });
  add("global average pooling, dims dropped", {{1, 5, 6, 3}}, {1, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        unary(b, K::XNNGlobalAvgPooling2d, in[0], out);
      });
  add("reshape with an inferred dim", {{2, 3, 4}}, {6, 4},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNStaticReshapeT>(K::XNNStaticReshape);
        n->num_dims = 2, n->new_shape = {6, 0}, n->input_id = in[0], n->output_id = out;
      });
  add("transpose", {{2, 3, 4}}, {4, 2, 3}, [](PayloadBuilder& b, const auto& in, uint32_t out) {
    auto* n = b.node<fb::XNNStaticTransposeT>(K::XNNStaticTranspose);
    n->num_dims = 3, n->perm = {2, 0, 1}, n->input_id = in[0], n->output_id = out;
  });
  add("slice", {{5, 6}}, {3, 4}, [](PayloadBuilder& b, const auto& in, uint32_t out) {
    auto* n = b.node<fb::XNNStaticSliceT>(K::XNNStaticSlice);
    n->num_dims = 2, n->offsets = {1, 2}, n->sizes = {3, 4};
    n->input_id = in[0], n->output_id = out;
  });
  add("constant pad", {{2, 3}}, {5, 6}, [](PayloadBuilder& b, const auto& in, uint32_t out) {
    auto* n = b.node<fb::XNNStaticConstantPadT>(K::XNNStaticConstantPad);
    n->pre_paddings = {1, 0}, n->post_paddings = {2, 3};
    n->input_id = in[0], n->output_id = out;
  });
  add("bilinear resize", {{1, 4, 5, 3}}, {1, 7, 9, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNStaticResizeBilinear2DT>(K::XNNStaticResizeBilinear2D);
        n->new_height = 7, n->new_width = 9, n->input_id = in[0], n->output_id = out;
      });
  add("concatenate 2", {{2, 3, 4}, {2, 5, 4}}, {2, 8, 4},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        concat(b, K::XNNConcatenate2, 1, in, out);
      });
  add("concatenate 3", {{1, 3}, {2, 3}, {4, 3}}, {7, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        concat(b, K::XNNConcatenate3, 0, in, out);
      });
  add("concatenate 5", {{2, 1}, {2, 2}, {2, 3}, {2, 4}, {2, 5}}, {2, 15},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        concat(b, K::XNNConcatenate5, 1, in, out);
      });
  // Session 21: zero-sized dims, broadcasts of unequal rank, fewer paddings
  // than dims, and windows that outgrow their input.
  add("add zero against one", {{2, 0, 3}, {2, 1, 3}}, {2, 0, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNAdd, in[0], in[1], out);
      });
  add("add one against zero", {{2, 1, 3}, {2, 0, 3}}, {2, 0, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNAdd, in[0], in[1], out);
      });
  add("prelu input narrower than slope", {{1, 4, 4, 1}, {3}}, {1, 4, 4, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNPReLU, in[0], in[1], out);
      });
  add("prelu slope of more dims", {{4, 3}, {2, 1, 3}}, {2, 4, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNPReLU, in[0], in[1], out);
      });
  add("batch matmul A 2-d", {{3, 4}, {2, 4, 5}}, {2, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNBatchMatrixMultiply, in[0], in[1], out);
      });
  add("batch matmul B 2-d", {{2, 3, 4}, {4, 5}}, {2, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNBatchMatrixMultiply, in[0], in[1], out);
      });
  add("batch matmul batch broadcast", {{2, 1, 3, 4}, {1, 3, 4, 5}}, {2, 3, 3, 5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        add_binary(b, K::XNNBatchMatrixMultiply, in[0], in[1], out);
      });
  add("fully-connected 1-d", {{4}}, {5},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        fully_connected(b, in[0], {5, 4}, out, 0);
      });
  add("gap rank 3 dropped", {{2, 5, 3}}, {3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        unary(b, K::XNNGlobalAvgPooling2d, in[0], out);
      });
  add("gap rank 5 kept", {{2, 3, 4, 5, 6}}, {2, 3, 1, 1, 6},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        unary(b, K::XNNGlobalAvgPooling2d, in[0], out, XNN_FLAG_KEEP_DIMS);
      });
  add("gap rank 5 dropped", {{2, 3, 4, 5, 6}}, {2, 3, 6},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        unary(b, K::XNNGlobalAvgPooling2d, in[0], out);
      });
  add("max pooling same padding stride 2", {{1, 7, 8, 2}}, {1, 4, 4, 2},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        pooling(b, K::XNNMaxPooling2d, in[0], out, 3, 2, 0, 1, XNN_FLAG_TENSORFLOW_SAME_PADDING);
      });
  add("pad rank 4 fewer entries", {{1, 2, 3, 4}}, {2, 4, 3, 4},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNStaticConstantPadT>(K::XNNStaticConstantPad);
        n->pre_paddings = {1, 1}, n->post_paddings = {0, 1};
        n->input_id = in[0], n->output_id = out;
      });
  add("reshape zero elements", {{0, 4}}, {0, 2, 2},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNStaticReshapeT>(K::XNNStaticReshape);
        n->num_dims = 3, n->new_shape = {0, 2, 2}, n->input_id = in[0], n->output_id = out;
      });
  add("softmax 1-d", {{7}}, {7}, [](PayloadBuilder& b, const auto& in, uint32_t out) {
    unary(b, K::XNNSoftmax, in[0], out);
  });
  add("attention", {{1, 2, 3, 4}, {1, 2, 5, 4}, {1, 2, 5, 6}, {4}, {3, 5}}, {1, 2, 3, 6},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNScaledDotProductAttentionT>(K::XNNScaledDotProductAttention);
        n->query_id = in[0], n->key_id = in[1], n->value_id = in[2], n->scale_id = in[3];
        n->mask_id = in[4], n->output_id = out;
      });
  add("attention multi-query", {{2, 3, 4}, {5, 4}, {5, 6}, {4}, {3, 5}}, {2, 3, 6},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        auto* n = b.node<fb::XNNScaledDotProductAttentionT>(K::XNNScaledDotProductAttention);
        n->query_id = in[0], n->key_id = in[1], n->value_id = in[2], n->scale_id = in[3];
        n->mask_id = in[4], n->output_id = out;
      });
  add("concatenate zero", {{2, 0}, {2, 3}}, {2, 3},
      [](PayloadBuilder& b, const auto& in, uint32_t out) {
        concat(b, K::XNNConcatenate2, 1, in, out);
      });
  return cases;
}

class ShapeOracleTest : public ::testing::TestWithParam<size_t> {};

std::string case_name(const ::testing::TestParamInfo<size_t>& info) {
  std::string name = oracle_cases()[info.param].name;
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

// XNNPACK (alone, and with our stages) resizes the output to the shape the
// delegate inferred; declaring any dim one smaller is refused.
TEST_P(ShapeOracleTest, InferredShapeIsXnnpacksAndASmallerDeclarationIsRefused) {
  const OracleCase c = oracle_cases()[GetParam()];
  // XNN_SHAPE_SEEDS=DIR writes each case's payload there as DIR/shape_NAME.bin:
  // fuzz/corpus/xnnpack_payload's seeds of one shape rule each.
  if (const char* dir = std::getenv("XNN_SHAPE_SEEDS")) {
    const std::vector<uint8_t> payload = build(c, c.expected);
    std::ofstream(std::string(dir) + "/shape_" + case_name({GetParam(), 0}) + ".bin",
                  std::ios::binary)
        .write(reinterpret_cast<const char*>(payload.data()), std::streamsize(payload.size()));
  }
  std::vector<OwnedTensor> inputs;
  for (const Dims& d : c.inputs) {
    std::vector<SizesType> sizes(d.begin(), d.end());
    size_t n = 1;
    for (uint32_t v : d) n *= v;
    inputs.push_back(float_tensor(sizes, random_values(n, 11)));
  }
  std::vector<OwnedTensor*> set;
  for (OwnedTensor& t : inputs) set.push_back(&t);
  // Room beyond every expected dim, so a larger XNNPACK output would show.
  const std::vector<SizesType> bound(c.expected.size(), 64);
  for (bool xnnpack_only : {true, false}) {
    const std::vector<Outputs> out = run_all(build(c, c.expected), {set}, {bound}, xnnpack_only);
    ASSERT_EQ(out.size(), 1u);
    ASSERT_TRUE(out[0].status.ok()) << out[0].status.message();
    EXPECT_EQ(out[0].shapes[0], std::vector<SizesType>(c.expected.begin(), c.expected.end()));
  }
  for (size_t d = 0; d < c.expected.size(); ++d) {
    Dims smaller = c.expected;
    --smaller[d];
    LoadedDelegate loaded(build(c, smaller));
    EXPECT_EQ(loaded.status().code(), Error::kInvalidProgram) << "dim " << d;
  }
}

INSTANTIATE_TEST_SUITE_P(EveryKind, ShapeOracleTest,
                         ::testing::Range(size_t{0}, oracle_cases().size()), case_name);

Status init_status(const std::vector<uint8_t>& payload) {
  LoadedDelegate d(payload);
  return d.status();
}

// Init refuses `payload` with kInvalidProgram and a message containing `text`.
void expect_init_refused(const std::vector<uint8_t>& payload, const std::string& text) {
  const Status s = init_status(payload);
  EXPECT_EQ(s.code(), Error::kInvalidProgram) << s.message();
  EXPECT_THAT(s.message(), HasSubstr(text));
}

// The refusal for node `node` of `kind` writing value `value`.
void expect_refused(const Status& s, const std::string& node_kind, uint32_t value,
                    const std::string& inferred, const std::string& declared) {
  EXPECT_EQ(s.code(), Error::kInvalidProgram) << s.message();
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node " + node_kind + ": XNNPACK gives its output "
                                     "value " + std::to_string(value) + " the shape " + inferred +
                                     " at the declared input shapes, but the value declares " +
                                     declared));
}

// One node of each group whose declared output swaps dims its inputs give
// (same element count, so the earlier element bound let it through).
TEST(XnnpackShapeInferenceTest, UnaryNodeWithSwappedDimsIsRefused) {
  for (K kind : {K::XNNSigmoid, K::XNNClamp, K::XNNSoftmax, K::XNNConvert, K::XNNCopy}) {
    SCOPED_TRACE(fb::EnumNameXNodeUnion(kind));
    PayloadBuilder b;
    const uint32_t x = b.input({4, 6}, 0);
    unary(b, kind, x, b.output({6, 4}, 1));
    expect_refused(init_status(b.build()), std::string("0 (") + fb::EnumNameXNodeUnion(kind) + ")",
                   1, "[4,6]", "[6,4]");
  }
}

TEST(XnnpackShapeInferenceTest, BinaryNodeWithSwappedDimsIsRefused) {
  PayloadBuilder b;
  const uint32_t x = b.input({4, 1}, 0), y = b.input({1, 6}, 1);
  add_binary(b, K::XNNMultiply, x, y, b.output({6, 4}, 2));
  expect_refused(init_status(b.build()), "0 (XNNMultiply)", 2, "[4,6]", "[6,4]");
}

TEST(XnnpackShapeInferenceTest, LinearNodesWithSwappedDimsAreRefused) {
  {
    PayloadBuilder b;
    const uint32_t x = b.input({8, 4}, 0);
    fully_connected(b, x, {3, 4}, b.output({3, 8}, 1), 0);
    expect_refused(init_status(b.build()), "0 (XNNFullyConnected)", 1, "[8,3]", "[3,8]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({2, 3, 4}, 0), y = b.input({2, 4, 5}, 1);
    add_binary(b, K::XNNBatchMatrixMultiply, x, y, b.output({2, 5, 3}, 2));
    expect_refused(init_status(b.build()), "0 (XNNBatchMatrixMultiply)", 2, "[2,3,5]",
                   "[2,5,3]");
  }
}

TEST(XnnpackShapeInferenceTest, WindowedNodesWithSwappedDimsAreRefused) {
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 8, 16, 3}, 0);
    add_conv(b, {3, 8, 1}, x, b.output({1, 16, 8, 8}, 1), 1);
    expect_refused(init_status(b.build()), "0 (XNNConv2d)", 1, "[1,8,16,8]", "[1,16,8,8]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 8, 16, 3}, 0);
    pooling(b, K::XNNMaxPooling2d, x, b.output({1, 8, 4, 3}, 1), 2, 2, 0, 1);
    expect_refused(init_status(b.build()), "0 (XNNMaxPooling2d)", 1, "[1,4,8,3]", "[1,8,4,3]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 4, 6, 3}, 0);
    unary(b, K::XNNGlobalAvgPooling2d, x, b.output({1, 3, 1, 1}, 1), XNN_FLAG_KEEP_DIMS);
    expect_refused(init_status(b.build()), "0 (XNNGlobalAvgPooling2d)", 1, "[1,1,1,3]",
                   "[1,3,1,1]");
  }
}

TEST(XnnpackShapeInferenceTest, DataMovementNodesWithSwappedDimsAreRefused) {
  {
    PayloadBuilder b;
    const uint32_t x = b.input({2, 3, 4}, 0);
    auto* n = b.node<fb::XNNStaticTransposeT>(K::XNNStaticTranspose);
    n->num_dims = 3, n->perm = {0, 2, 1}, n->input_id = x, n->output_id = b.output({2, 3, 4}, 1);
    expect_refused(init_status(b.build()), "0 (XNNStaticTranspose)", 1, "[2,4,3]", "[2,3,4]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({2, 3}, 0);
    auto* n = b.node<fb::XNNStaticConstantPadT>(K::XNNStaticConstantPad);
    n->pre_paddings = {0, 3}, n->post_paddings = {0, 1};
    n->input_id = x, n->output_id = b.output({7, 2}, 1);
    expect_refused(init_status(b.build()), "0 (XNNStaticConstantPad)", 1, "[2,7]", "[7,2]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({2, 3}, 0), y = b.input({2, 5}, 1);
    concat(b, K::XNNConcatenate2, 1, {x, y}, b.output({8, 2}, 2));
    expect_refused(init_status(b.build()), "0 (XNNConcatenate2)", 2, "[2,8]", "[8,2]");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 4, 4, 3}, 0);
    auto* n = b.node<fb::XNNStaticResizeBilinear2DT>(K::XNNStaticResizeBilinear2D);
    n->new_height = 8, n->new_width = 2, n->input_id = x, n->output_id = b.output({1, 2, 8, 3}, 1);
    expect_refused(init_status(b.build()), "0 (XNNStaticResizeBilinear2D)", 1, "[1,8,2,3]",
                   "[1,2,8,3]");
  }
  {
    // The 0 entry takes what the input holds beyond the fixed dims: 24 / 3.
    PayloadBuilder b;
    const uint32_t x = b.input({2, 3, 4}, 0);
    auto* n = b.node<fb::XNNStaticReshapeT>(K::XNNStaticReshape);
    n->num_dims = 2, n->new_shape = {0, 3}, n->input_id = x, n->output_id = b.output({3, 8}, 1);
    expect_refused(init_status(b.build()), "0 (XNNStaticReshape)", 1, "[8,3]", "[3,8]");
  }
}

// Session 19's open gap: node 0 writes [1, 1000, 1, 8] into a value
// declared [1, 1, 1000, 8] (the same 8,000 elements), and node 1 pads the
// width by 1,000. At the declared dims node 1 makes [1, 1, 1998, 8] and
// 144 KB of indirection pointers; at the real ones [1, 1000, 999, 8] and
// 72 MB, 500x the estimate. Node 0 is refused now.
TEST(XnnpackShapeInferenceTest, SwappedDimsCannotFoolALaterPaddedConvolution) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 1000, 1, 8}, 0);
  const uint32_t swapped = b.internal({1, 1, 1000, 8});
  add_conv(b, {8, 8, 1}, x, swapped, 1);
  const uint32_t y = b.output({1, 1, 1998, 8}, 1);
  add_conv(b, {8, 8, 3}, swapped, y, 2);
  auto* wide = last_conv(b);
  wide->padding_top = wide->padding_bottom = 1;
  wide->padding_left = wide->padding_right = 500;
  expect_refused(init_status(b.build()), "0 (XNNConv2d)", 1, "[1,1000,1,8]", "[1,1,1000,8]");
}

// Upstream declares dynamic dims as upper bounds: a batch or spatial dim may
// be declared larger than XNNPACK makes it, a channel count may not.
TEST(XnnpackShapeInferenceTest, OnlyDimsThatFollowTheInputsMayBeDeclaredLarger) {
  auto conv_into = [](Dims out) {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 8, 8, 3}, 0);
    add_conv(b, {3, 8, 3, 1, 1}, x, b.output(out, 1), 4);
    return b.build();
  };
  EXPECT_TRUE(init_status(conv_into({2, 10, 9, 8})).ok());
  OwnedTensor in = float_tensor({1, 8, 8, 3}, random_values(192, 5));
  const std::vector<Outputs> out = run_all(conv_into({2, 10, 9, 8}), {{&in}}, {{2, 10, 9, 8}}, false);
  ASSERT_TRUE(out[0].status.ok()) << out[0].status.message();
  EXPECT_EQ(out[0].shapes[0], (std::vector<SizesType>{1, 8, 8, 8}));
  expect_refused(init_status(conv_into({1, 8, 8, 9})), "0 (XNNConv2d)", 1, "[1,8,8,8]",
                 "[1,8,8,9]");
}

// A value declared wider than its writer makes it passes (its dim follows
// the input), but XNNPACK's fully-connected takes its features from the
// filter and would read 32 per row of a 16-wide input: refused at the
// inferred shape though the declared one matches.
TEST(XnnpackShapeInferenceTest, FullyConnectedChecksTheFeaturesItWillBeGiven) {
  PayloadBuilder b;
  const uint32_t x = b.input({2, 16}, 0);
  const uint32_t wide = b.internal({2, 32});
  unary(b, K::XNNSigmoid, x, wide);
  fully_connected(b, wide, {3, 32}, b.output({2, 3}, 1), 0);
  const Status s = init_status(b.build());
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 1 (XNNFullyConnected): input [2,16] has 16 "
                                     "features, the filter [3,32] expects 32"));
}

TEST(XnnpackShapeInferenceTest, ConvolutionChecksTheChannelsItWillBeGiven) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 4, 4, 3}, 0);
  const uint32_t wide = b.internal({1, 4, 4, 6});
  unary(b, K::XNNSigmoid, x, wide);
  add_conv(b, {6, 8, 1}, wide, b.output({1, 4, 4, 8}, 1), 4);
  const Status s = init_status(b.build());
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 1 (XNNConv2d): input [1,4,4,3] has 3 channels; "
                                     "the node's parameters take 6"));
}

TEST(XnnpackShapeInferenceTest, ANodeReadingAValueNoEarlierNodeWritesIsRefused) {
  PayloadBuilder b;
  const uint32_t x = b.input({4}, 0);
  const uint32_t later = b.internal({4});
  const uint32_t y = b.output({4}, 1);
  add_binary(b, K::XNNAdd, x, later, y);
  unary(b, K::XNNSigmoid, x, later);
  const Status s = init_status(b.build());
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("XNNPACK node 0 (XNNAdd): its input 2, value 1, is not "
                                     "written by any earlier node"));
}

// Issue 11: at execute an input may be smaller than declared, but XNNPACK
// trusts the channels and features it was built for: a convolution built
// for 8 channels per pixel read 8 per pixel of a 2-channel input (past its
// 32 floats; execute returned Ok in session 20), a fully-connected 16
// features per row of an 8-wide one. Execute now reruns the inference for
// changed input dims. One payload: x [1,4,4,8] -> 3x3 convolution (split:
// a conv2d stage where the routing takes it, as on AVX2; its profiling
// events say so) -> [1,4,4,4]; y [2,16] -> fully-connected -> [2,3].
std::vector<uint8_t> conv_and_fully_connected() {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 4, 4, 8}, 0);
  const uint32_t y = b.input({2, 16}, 1);
  add_conv(b, {8, 4, 3, 1, 1}, x, b.output({1, 4, 4, 4}, 2), 4);
  fully_connected(b, y, {3, 16}, b.output({2, 3}, 3), 0);
  return b.build();
}

TEST(XnnpackShapeInferenceTest, InputNarrowerWhereAWeightFixesItIsRefusedAtExecute) {
  OwnedTensor x = float_tensor({1, 4, 4, 8}, random_values(128, 5));
  OwnedTensor y = float_tensor({2, 16}, random_values(32, 6));
  OwnedTensor narrow_x = float_tensor({1, 4, 4, 2}, random_values(32, 7));
  OwnedTensor narrow_y = float_tensor({2, 8}, random_values(16, 8));
  const std::vector<std::vector<SizesType>> bounds = {{1, 4, 4, 4}, {2, 3}};
  for (bool xnnpack_only : {true, false}) {
    const std::vector<Outputs> out = run_all(
        conv_and_fully_connected(), {{&narrow_x, &y}, {&x, &y}, {&x, &narrow_y}, {&x, &y}},
        bounds, xnnpack_only);
    EXPECT_EQ(out[0].status.code(), Error::kInvalidArgument) << xnnpack_only;
    EXPECT_THAT(out[0].status.message(),
                HasSubstr("XNNPACK delegate input 0 has size 2 in dim 3; the graph needs 8 there "
                          "(XNNPACK node 0 (XNNConv2d): input [1,4,4,2] has 2 channels; the "
                          "node's parameters take 8)"));
    EXPECT_TRUE(out[1].status.ok()) << out[1].status.message();
    EXPECT_EQ(out[2].status.code(), Error::kInvalidArgument) << xnnpack_only;
    EXPECT_THAT(out[2].status.message(),
                HasSubstr("XNNPACK delegate input 1 has size 8 in dim 1; the graph needs 16 "
                          "there (XNNPACK node 1 (XNNFullyConnected): input [2,8] has 8 "
                          "features"));
    EXPECT_TRUE(out[3].status.ok()) << out[3].status.message();
    EXPECT_EQ(out[1].values, out[3].values) << xnnpack_only;  // A refusal leaves no trace.
  }
}

// Dims that follow the inputs may shrink (batch, height, width): the same
// payload runs, split and alone alike, at the smaller shapes.
TEST(XnnpackShapeInferenceTest, InputSmallerWhereOnlyItsSizeFollowsRunsAtExecute) {
  OwnedTensor x = float_tensor({1, 3, 2, 8}, random_values(48, 5));
  OwnedTensor y = float_tensor({1, 16}, random_values(16, 6));
  OwnedTensor full_x = float_tensor({1, 4, 4, 8}, random_values(128, 7));
  OwnedTensor full_y = float_tensor({2, 16}, random_values(32, 8));
  const std::vector<std::vector<OwnedTensor*>> sets = {{&full_x, &full_y}, {&x, &y}};
  const std::vector<std::vector<SizesType>> bounds = {{1, 4, 4, 4}, {2, 3}};
  const std::vector<Outputs> split = run_all(conv_and_fully_connected(), sets, bounds, false);
  const std::vector<Outputs> alone = run_all(conv_and_fully_connected(), sets, bounds, true);
  ASSERT_TRUE(split[1].status.ok()) << split[1].status.message();
  EXPECT_EQ(split[1].shapes[0], (std::vector<SizesType>{1, 3, 2, 4}));
  EXPECT_EQ(split[1].shapes[1], (std::vector<SizesType>{1, 3}));
  expect_same_outputs(split, alone);
}

// Session 21's oracle probe: a transposed 3x3 convolution of a 2x2 input
// padded by 2 all round has no output (1 * (2 - 1) + 3 - 4 = 0 rows), and
// XNNPACK died of SIGFPE setting it up (regressions/xnnpack_payload/
// transposed_conv_padding_removes_output_sigfpe.bin). Refused at init; the
// same rule refuses an input that shrinks to it at execute.
TEST(XnnpackShapeInferenceTest, TransposedConvolutionWithNoOutputIsRefused) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 2, 2, 2}, 0);
  const uint32_t w = b.constant_f32({5, 3, 3, 2}, random_values(90, 7));
  auto* n = conv_3x3(b, K::XNNConvTranspose2d, x, w, b.output({1, 1, 1, 5}, 1), 1, 1, 2, 5);
  n->padding_top = n->padding_bottom = n->padding_left = n->padding_right = 2;
  expect_init_refused(b.build(), "XNNPACK node 0 (XNNConvTranspose2d): its padding (4 rows, 4 "
                                 "columns) removes the whole output of the input [1,2,2,2]");
}

// The xnnpack_payload campaign of session 21 (regressions/xnnpack_payload/
// avg_pooling_same_padding_wraps_3.7GB.bin): average pooling 3x3 with
// XNN_FLAG_TENSORFLOW_SAME_PADDING and a row stride of 253 over a 7x8 input.
// XNNPACK pads by (1 - 1) * 253 + 3 - 7 rows, in unsigned arithmetic, and
// asked for 3.7 GB at the first execute. Refused at init, for convolutions too.
TEST(XnnpackShapeInferenceTest, SamePaddingThatWouldBeNegativeIsRefused) {
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 7, 8, 3}, 0);
    auto* n = b.node<fb::_XNNPooling2DT>(K::XNNAvgPooling2d);
    n->pooling_height = n->pooling_width = 3;
    n->stride_height = 253, n->stride_width = 3;
    n->dilation_height = n->dilation_width = 1;
    n->input_id = x, n->output_id = b.output({1, 3, 3, 3}, 1);
    n->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
    expect_init_refused(b.build(), "XNNPACK node 0 (XNNAvgPooling2d): with "
                                   "XNN_FLAG_TENSORFLOW_SAME_PADDING its window of 3 and "
                                   "stride 253 leave 4 input rows unread");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 9, 9, 3}, 0);
    add_conv(b, {3, 8, 2, 5, 0}, x, b.output({1, 2, 2, 8}, 1), 5);
    last_conv(b)->flags = XNN_FLAG_TENSORFLOW_SAME_PADDING;
    expect_init_refused(b.build(), "XNNPACK node 0 (XNNConv2d): with "
                                   "XNN_FLAG_TENSORFLOW_SAME_PADDING its window of 2 and "
                                   "stride 5 leave 2 input rows unread");
  }
}

// Session 21's oracle probe: a 3x3 convolution dilated by 2 (a window of 5)
// of an unpadded 2x2 input. XNNPACK computes one output pixel, but its
// indirection buffer has no row for the taps beyond the input, and its GEMM
// asserted (abort) on the null row (regressions/xnnpack_payload/
// conv_window_beyond_input_abort.bin). Refused at init, pooling windows too;
// PyTorch refuses such windows as well.
TEST(XnnpackShapeInferenceTest, WindowLargerThanThePaddedInputIsRefused) {
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 2, 2, 3}, 0);
    add_conv(b, {3, 8, 5, 1, 1}, x, b.output({1, 1, 1, 8}, 1), 5);
    expect_init_refused(b.build(), "XNNPACK node 0 (XNNConv2d): its window of 5 rows is "
                                   "larger than the input's 2 with padding 2");
  }
  {
    PayloadBuilder b;
    const uint32_t x = b.input({1, 4, 2, 3}, 0);
    pooling(b, K::XNNMaxPooling2d, x, b.output({1, 2, 1, 3}, 1), 2, 2, 0, 2);
    expect_init_refused(b.build(), "XNNPACK node 0 (XNNMaxPooling2d): its window of 3 columns "
                                   "is larger than the input's 2 with padding 0");
  }
}

// Argmax pooling writes two values. XNNPACK gives an internal value no node
// reads no memory, and asserted (abort) on the null index output of one
// whose indices nobody read (session 21's oracle probe; regressions/
// xnnpack_payload/argmax_pooling_unread_indices_abort.bin). Every output
// must be read or a graph output.
TEST(XnnpackShapeInferenceTest, ArgmaxPoolingWithUnreadIndicesIsRefused) {
  PayloadBuilder b;
  const uint32_t x = b.input({1, 7, 8, 2}, 0);
  auto* n = b.node<fb::XNNArgMaxPooling2dT>(K::XNNArgMaxPooling2d);
  n->padding_left = 1;
  n->pooling_height = n->pooling_width = 2;
  n->input_id = x, n->output_value_id = b.output({1, 3, 4, 2}, 1);
  n->output_index_id = b.internal({1, 3, 4, 2});
  expect_init_refused(b.build(), "XNNPACK node 0 (XNNArgMaxPooling2d): its output value 2 is "
                                 "neither read by a node nor a graph output");
}

// Nodes whose channels follow their input (no weight fixes them) run with
// fewer channels than declared: XNNPACK computes on the narrower input
// (values against a reference), not with the declared channel stride.
TEST(XnnpackShapeInferenceTest, ChannelsThatFollowTheInputMayShrinkAtExecute) {
  struct Probe {
    std::string name;
    Dims in, out;
    std::function<void(PayloadBuilder&, uint32_t, uint32_t)> node;
    // Reference output for input values `x` of dims `d`.
    std::function<std::vector<float>(const std::vector<float>&, const Dims&)> ref;
  };
  auto mean_hw = [](const std::vector<float>& x, const Dims& d) {
    const uint32_t px = d[1] * d[2], c = d[3];
    std::vector<float> y(c, 0.0f);
    for (uint32_t p = 0; p < px; ++p)
      for (uint32_t k = 0; k < c; ++k) y[k] += x[p * c + k] / px;
    return y;
  };
  auto max_hw = [](const std::vector<float>& x, const Dims& d) {
    const uint32_t px = d[1] * d[2], c = d[3];
    std::vector<float> y(c, -1e30f);
    for (uint32_t p = 0; p < px; ++p)
      for (uint32_t k = 0; k < c; ++k) y[k] = std::max(y[k], x[p * c + k]);
    return y;
  };
  auto softmax_rows = [](const std::vector<float>& x, const Dims& d) {
    const uint32_t c = d.back(), rows = static_cast<uint32_t>(x.size()) / c;
    std::vector<float> y(x.size());
    for (uint32_t r = 0; r < rows; ++r) {
      double sum = 0;
      for (uint32_t k = 0; k < c; ++k) sum += std::exp(double(x[r * c + k]));
      for (uint32_t k = 0; k < c; ++k) y[r * c + k] = float(std::exp(double(x[r * c + k])) / sum);
    }
    return y;
  };
  std::vector<Probe> probes = {
      {"gap kept", {1, 3, 3, 8}, {1, 1, 1, 8},
       [](PayloadBuilder& b, uint32_t in, uint32_t out) {
         unary(b, K::XNNGlobalAvgPooling2d, in, out, XNN_FLAG_KEEP_DIMS);
       },
       mean_hw},
      {"gap dropped", {1, 3, 3, 8}, {1, 8},
       [](PayloadBuilder& b, uint32_t in, uint32_t out) {
         unary(b, K::XNNGlobalAvgPooling2d, in, out);
       },
       mean_hw},
      {"avg pool", {1, 2, 2, 8}, {1, 1, 1, 8},
       [](PayloadBuilder& b, uint32_t in, uint32_t out) {
         pooling(b, K::XNNAvgPooling2d, in, out, 2, 2, 0, 1);
       },
       mean_hw},
      {"max pool", {1, 2, 2, 8}, {1, 1, 1, 8},
       [](PayloadBuilder& b, uint32_t in, uint32_t out) {
         pooling(b, K::XNNMaxPooling2d, in, out, 2, 2, 0, 1);
       },
       max_hw},
      {"softmax", {2, 8}, {2, 8},
       [](PayloadBuilder& b, uint32_t in, uint32_t out) { unary(b, K::XNNSoftmax, in, out); },
       softmax_rows},
  };
  for (const Probe& p : probes) {
    for (uint32_t c : {8u, 3u}) {
      SCOPED_TRACE(p.name + " channels " + std::to_string(c));
      PayloadBuilder b;
      const uint32_t x = b.input(p.in, 0);
      p.node(b, x, b.output(p.out, 1));
      Dims d = p.in;
      d.back() = c;
      size_t n = 1;
      for (uint32_t v : d) n *= v;
      const std::vector<float> xv = random_values(n, 9);
      OwnedTensor t = float_tensor(std::vector<SizesType>(d.begin(), d.end()), xv);
      const std::vector<SizesType> bound(p.out.begin(), p.out.end());
      const std::vector<Outputs> out = run_all(b.build(), {{&t}}, {bound}, true);
      if (!out[0].status.ok()) {
        ADD_FAILURE() << "refused: " << out[0].status.message();
        continue;
      }
      const std::vector<float> want = p.ref(xv, d);
      ASSERT_EQ(out[0].values[0].size(), want.size()) << ::testing::PrintToString(out[0].shapes[0]);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(out[0].values[0][i], want[i], 1e-5) << i;
    }
  }
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
