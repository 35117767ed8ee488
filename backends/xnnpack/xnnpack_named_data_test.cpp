// Constants in the program's named data (upstream main's payloads): a
// ConstantDataOffset with `named_key` reads its bytes from the NamedDataMap
// the method hands the backend at init, and the delegate keeps them.
#include <cmath>
#include <cstring>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using ::testing::HasSubstr;
using DT = fb::XNNDatatype;

constexpr size_t kRows = 3, kIn = 8, kOut = 5;

// x[rows, in] -> fc(W, b) -> t; y = t + c, with W, b and c constants kept
// in named data (named = true) or inline in the payload.
struct LinearPlusConstant {
  PayloadBuilder b;
  std::vector<float> w = random_values(kOut * kIn, 11);
  std::vector<float> bias = random_values(kOut, 12);
  std::vector<float> c = random_values(kOut, 13);

  explicit LinearPlusConstant(bool named) {
    const uint32_t x = b.input({kRows, kIn}, 0);
    const uint32_t wv = constant({kOut, kIn}, w, named, "w");
    const uint32_t bv = constant({kOut}, bias, named, "b");
    const uint32_t cv = constant({kOut}, c, named, "c");
    const uint32_t t = b.internal({kRows, kOut});
    const uint32_t y = b.output({kRows, kOut}, 1);
    auto* fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
    fc->input1_id = x, fc->filter_id = wv, fc->bias_id = bv, fc->output_id = t;
    // XNNPACK reads an add's constant operand by pointer for the runtime's
    // whole life (it packs only convolution and fully-connected weights).
    auto* add = b.node<fb::_XNNNode2x1T>(fb::XNodeUnion::XNNAdd);
    add->input1_id = t, add->input2_id = cv, add->output_id = y;
  }
  uint32_t constant(std::vector<uint32_t> dims, const std::vector<float>& v, bool named,
                    const char* key) {
    if (!named) return b.constant_f32(std::move(dims), v);
    const uint32_t index = b.named_constant(key, v.data(), v.size() * sizeof(float));
    return b.value(DT::xnn_datatype_fp32, std::move(dims), 0, kNone, index);
  }
  fb::ConstantDataOffsetT& entry(uint32_t index) { return *b.graph.constant_data[index]; }
};

std::vector<float> run(LoadedDelegate& d, const std::vector<float>& x) {
  EXPECT_TRUE(d.status().ok()) << d.status().message();
  OwnedTensor tx = float_tensor({SizesType(kRows), SizesType(kIn)}, x);
  OwnedTensor ty = float_tensor({SizesType(kRows), SizesType(kOut)});
  const Status s = d.execute({tx.evalue(), ty.evalue()});
  EXPECT_TRUE(s.ok()) << s.message();
  return values_of(ty);
}

TEST(XnnpackNamedDataTest, NamedConstantsComputeWhatInlineOnesDo) {
  LinearPlusConstant named(true), inline_(false);
  const auto x = random_values(kRows * kIn, 14);
  const std::vector<uint8_t> named_payload = named.b.build();
  NamedDataInMemory map(named.b.named_data);
  std::vector<float> got;
  {
    LoadedDelegate d(named_payload, xnnpack_backend(), nullptr, &map);
    got = run(d, x);
    EXPECT_EQ(map.loads, 3);
    EXPECT_EQ(map.live, 3) << "the delegate must hold its named constants while it lives";
    // A second call still reads the add operand through the kept buffer.
    EXPECT_EQ(run(d, x), got);
  }
  EXPECT_EQ(map.live, 0) << "destroying the delegate frees its named constants";
  LoadedDelegate d_inline(inline_.b.build());
  EXPECT_EQ(run(d_inline, x), got);  // Same XNNPACK, same bytes: bit-identical.
  for (size_t r = 0; r < kRows; ++r)
    for (size_t o = 0; o < kOut; ++o) {
      double acc = named.bias[o] + double{named.c[o]};
      for (size_t k = 0; k < kIn; ++k) acc += double{x[r * kIn + k]} * named.w[o * kIn + k];
      EXPECT_NEAR(got[r * kOut + o], acc, 1e-5) << "row " << r << ", out " << o;
    }
}

TEST(XnnpackNamedDataTest, EntriesSharingAKeyLoadItOnce) {
  // Upstream deduplicates blobs by content: the bias and the add operand
  // below hold the same bytes, so both entries name one key.
  LinearPlusConstant l(true);
  l.c = l.bias;
  l.b.named_data["c"] = l.b.named_data["b"];
  l.entry(3).named_key = "b";
  l.b.named_data.erase("c");
  NamedDataInMemory map(l.b.named_data);
  LoadedDelegate d(l.b.build(), xnnpack_backend(), nullptr, &map);
  const auto x = random_values(kRows * kIn, 15);
  const auto got = run(d, x);
  EXPECT_EQ(map.loads, 2);
  double acc = 2.0 * l.bias[0];
  for (size_t k = 0; k < kIn; ++k) acc += double{x[k]} * l.w[k];
  EXPECT_NEAR(got[0], acc, 1e-5);
}

TEST(XnnpackNamedDataTest, ChannelScalesInNamedData) {
  // upstream main: int8 weights and their fp32 scales ("scale_" + hash) both
  // in named data, the scales reached through scale_buffer_idx.
  const size_t in = 16, out = 4, rows = 3;
  std::vector<int8_t> wq(out * in);
  const auto wr = random_values(out * in, 55);
  std::vector<float> scales(out);
  for (size_t i = 0; i < wq.size(); ++i) wq[i] = static_cast<int8_t>(std::lround(wr[i] * 127));
  for (size_t o = 0; o < out; ++o) scales[o] = 0.02f * static_cast<float>(o + 2);
  PayloadBuilder b;
  const uint32_t wi = b.named_constant("w8", wq.data(), wq.size());
  const uint32_t si = b.named_constant("scale_w8", scales.data(), scales.size() * sizeof(float));
  const uint32_t filter = b.quantized(DT::xnn_datatype_qcint8, {uint32_t(out), uint32_t(in)},
                                      per_channel_in_constant(si, uint32_t(out)), 0, kNone, wi);
  const uint32_t xf = b.input({uint32_t(rows), uint32_t(in)}, 0);
  const uint32_t xd = b.quantized(DT::xnn_datatype_qdint8, {uint32_t(rows), uint32_t(in)}, per_token());
  const uint32_t yf = b.output({uint32_t(rows), uint32_t(out)}, 1);
  auto* cv = b.node<fb::_XNNNode1x1T>(fb::XNodeUnion::XNNConvert);
  cv->input_id = xf, cv->output_id = xd;
  auto* fc = b.node<fb::XNNFullyConnectedT>(fb::XNodeUnion::XNNFullyConnected);
  fc->input1_id = xd, fc->filter_id = filter, fc->bias_id = kNone, fc->output_id = yf;

  NamedDataInMemory map(b.named_data);
  LoadedDelegate d(b.build(), xnnpack_backend(), nullptr, &map);
  ASSERT_TRUE(d.status().ok()) << d.status().message();
  const auto x = random_values(rows * in, 56);
  OwnedTensor tx = float_tensor({SizesType(rows), SizesType(in)}, x);
  OwnedTensor ty = float_tensor({SizesType(rows), SizesType(out)});
  ASSERT_TRUE(d.execute({tx.evalue(), ty.evalue()}).ok());
  const auto got = values_of(ty);
  for (size_t r = 0; r < rows; ++r) {
    float amax = 0;
    for (size_t k = 0; k < in; ++k) amax = std::max(amax, std::fabs(x[r * in + k]));
    for (size_t o = 0; o < out; ++o) {
      double acc = 0, wsum = 0;
      for (size_t k = 0; k < in; ++k) {
        acc += double{x[r * in + k]} * wq[o * in + k] * scales[o];
        wsum += std::fabs(wq[o * in + k] * scales[o]);
      }
      // Activations quantized to int8 per row: each off by at most half a
      // step of the row's range (2 * amax / 255).
      EXPECT_NEAR(got[r * out + o], acc, wsum * amax / 255.0 + 1e-5) << "row " << r;
    }
  }
}

Status init_status(const PayloadBuilder& b, const NamedDataMap* map) {
  LoadedDelegate d(b.build(), xnnpack_backend(), nullptr, map);
  return d.status();
}

TEST(XnnpackNamedDataTest, MissingKeyIsNamed) {
  LinearPlusConstant l(true);
  l.b.named_data.erase("b");
  NamedDataInMemory map(l.b.named_data);
  const Status s = init_status(l.b, &map);
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("named data 'b'"));
  EXPECT_EQ(map.live, 0) << "keys loaded before the failure are freed";
}

TEST(XnnpackNamedDataTest, NoNamedDataMapIsNamed) {
  LinearPlusConstant l(true);
  const Status s = init_status(l.b, nullptr);
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("named data 'w', but the program has no named data"));
}

TEST(XnnpackNamedDataTest, BlobShorterThanItsShapeIsNamed) {
  LinearPlusConstant l(true);
  l.b.named_data["w"].resize(12);
  NamedDataInMemory map(l.b.named_data);
  const Status s = init_status(l.b, &map);
  EXPECT_EQ(s.code(), Error::kInvalidProgram);
  EXPECT_THAT(s.message(), HasSubstr("named data 'w' of 12 bytes; its shape needs 160"));
  EXPECT_EQ(map.live, 0);
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
