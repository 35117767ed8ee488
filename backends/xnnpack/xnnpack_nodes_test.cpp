// Each XNNPACK node kind on payloads built here, checked against references
// computed in the test (plain loops over the same NHWC layouts the exporter
// writes). Tolerances: 1e-5 relative for exact ops, looser where XNNPACK
// uses approximations (sigmoid, tanh, gelu, exp, ...) or quantizes.
#include <algorithm>
#include <cmath>
#include <functional>
#include <vector>

#include <gtest/gtest.h>

#include "backends/xnnpack/payload_builder.h"

namespace torchlight {
namespace xnnpack {
namespace testing {
namespace {

using Kind = fb::XNodeUnion;
using DT = fb::XNNDatatype;

std::vector<uint32_t> u32(const std::vector<SizesType>& s) { return {s.begin(), s.end()}; }

// Builds, loads and runs a payload whose externals are inputs 0..n-1, then
// one fp32 output; returns the output values.
std::vector<float> run(const PayloadBuilder& b, const std::vector<OwnedTensor*>& inputs,
                       const std::vector<SizesType>& out_shape) {
  const auto payload = b.build();
  LoadedDelegate d(payload);
  EXPECT_TRUE(d.status().ok()) << d.status().message();
  OwnedTensor out = float_tensor(out_shape);
  std::vector<EValue> args;
  for (OwnedTensor* t : inputs) args.push_back(t->evalue());
  args.push_back(out.evalue());
  Status s = d.execute(args);
  EXPECT_TRUE(s.ok()) << s.message();
  return values_of(out);
}

void expect_near_all(const std::vector<float>& got, const std::vector<float>& want, float rel,
                     float abs_tol = 1e-6f) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], abs_tol + rel * std::fabs(want[i])) << "element " << i;
  }
}

// --- Unary ---------------------------------------------------------------

struct UnaryCase {
  Kind kind;
  std::function<float(float)> ref;
  float rel;
  bool positive_input;
};

float hardswish(float x) { return x * std::min(std::max(x + 3.0f, 0.0f), 6.0f) / 6.0f; }
float gelu(float x) { return 0.5f * x * (1.0f + std::erf(x / std::sqrt(2.0f))); }

TEST(XnnpackNodesTest, UnaryOpsMatchReference) {
  const std::vector<UnaryCase> cases = {
      {Kind::XNNSigmoid, [](float x) { return 1.0f / (1.0f + std::exp(-x)); }, 1e-5f, false},
      {Kind::XNNFloor, [](float x) { return std::floor(x); }, 0, false},
      {Kind::XNNCeiling, [](float x) { return std::ceil(x); }, 0, false},
      {Kind::XNNSquareRoot, [](float x) { return std::sqrt(x); }, 1e-6f, true},
      {Kind::XNNHardswish, hardswish, 1e-6f, false},
      {Kind::XNNNegate, [](float x) { return -x; }, 0, false},
      {Kind::XNNSquare, [](float x) { return x * x; }, 1e-6f, false},
      {Kind::XNNAbs, [](float x) { return std::fabs(x); }, 0, false},
      {Kind::XNNTanh, [](float x) { return std::tanh(x); }, 1e-5f, false},
      {Kind::XNNExp, [](float x) { return std::exp(x); }, 1e-5f, false},
      {Kind::XNNLog, [](float x) { return std::log(x); }, 1e-5f, true},
      {Kind::XNNGelu, gelu, 1e-5f, false},
      {Kind::XNNReciprocalSquareRoot, [](float x) { return 1.0f / std::sqrt(x); }, 1e-5f, true},
      {Kind::XNNSin, [](float x) { return std::sin(x); }, 1e-5f, false},
      {Kind::XNNCos, [](float x) { return std::cos(x); }, 1e-5f, false},
      {Kind::XNNCopy, [](float x) { return x; }, 0, false},
  };
  for (const UnaryCase& c : cases) {
    SCOPED_TRACE(fb::EnumNameXNodeUnion(c.kind));
    std::vector<float> x = random_values(3 * 7, 5);
    for (float& v : x) v = c.positive_input ? std::fabs(v) * 4 + 0.01f : v * 4;
    PayloadBuilder b;
    const uint32_t in = b.input({3, 7}, 0);
    const uint32_t out = b.output({3, 7}, 1);
    auto* n = b.node<fb::_XNNNode1x1T>(c.kind);
    n->input_id = in, n->output_id = out;
    OwnedTensor t = float_tensor({3, 7}, x);
    std::vector<float> want;
    for (float v : x) want.push_back(c.ref(v));
    expect_near_all(run(b, {&t}, {3, 7}), want, c.rel, 1e-6f);
  }
}

TEST(XnnpackNodesTest, ClampLeakyReluAndEluUseTheirParameters) {
  std::vector<float> x = random_values(20, 6);
  for (float& v : x) v *= 3;
  OwnedTensor t = float_tensor({4, 5}, x);
  {
    PayloadBuilder b;
    auto* n = b.node<fb::_XNNNode1x1T>(Kind::XNNClamp);
    n->input_id = b.input({4, 5}, 0), n->output_id = b.output({4, 5}, 1);
    b.clamp_last(-0.5f, 1.25f);
    std::vector<float> want;
    for (float v : x) want.push_back(std::min(std::max(v, -0.5f), 1.25f));
    expect_near_all(run(b, {&t}, {4, 5}), want, 0);
  }
  {
    PayloadBuilder b;
    auto* n = b.node<fb::XNNLeakyReLUT>(Kind::XNNLeakyReLU);
    n->negative_slope = 0.125f;
    n->input_id = b.input({4, 5}, 0), n->output_id = b.output({4, 5}, 1);
    std::vector<float> want;
    for (float v : x) want.push_back(v > 0 ? v : 0.125f * v);
    expect_near_all(run(b, {&t}, {4, 5}), want, 1e-6f);
  }
  {
    PayloadBuilder b;
    auto* n = b.node<fb::XNNELUT>(Kind::XNNELU);
    n->alpha = 0.75f;
    n->input_id = b.input({4, 5}, 0), n->output_id = b.output({4, 5}, 1);
    std::vector<float> want;
    for (float v : x) want.push_back(v > 0 ? v : 0.75f * (std::exp(v) - 1));
    expect_near_all(run(b, {&t}, {4, 5}), want, 1e-5f, 1e-6f);
  }
}

// --- Binary --------------------------------------------------------------

TEST(XnnpackNodesTest, BinaryOpsBroadcastAndClamp) {
  struct Case {
    Kind kind;
    std::function<float(float, float)> ref;
  };
  const std::vector<Case> cases = {
      {Kind::XNNAdd, [](float a, float b) { return a + b; }},
      {Kind::XNNSubtract, [](float a, float b) { return a - b; }},
      {Kind::XNNMultiply, [](float a, float b) { return a * b; }},
      {Kind::XNNDiv, [](float a, float b) { return a / b; }},
      {Kind::XNNMinimum, [](float a, float b) { return std::min(a, b); }},
      {Kind::XNNMaximum, [](float a, float b) { return std::max(a, b); }},
  };
  const std::vector<float> a = random_values(2 * 3, 7);
  std::vector<float> bv = random_values(3, 8);
  for (float& v : bv) v += v >= 0 ? 0.5f : -0.5f;  // Keep divisors away from 0.
  for (const Case& c : cases) {
    for (bool clamp : {false, true}) {
      SCOPED_TRACE(fb::EnumNameXNodeUnion(c.kind));
      PayloadBuilder b;
      auto* n = b.node<fb::_XNNNode2x1T>(c.kind);
      n->input1_id = b.input({2, 3}, 0);
      n->input2_id = b.input({3}, 1);
      n->output_id = b.output({2, 3}, 2);
      // Only add/sub/mul/div read output_min_max; min/max ignore it.
      const bool reads_clamp = c.kind != Kind::XNNMinimum && c.kind != Kind::XNNMaximum;
      if (clamp) b.clamp_last(-0.25f, 0.25f);
      OwnedTensor ta = float_tensor({2, 3}, a), tb = float_tensor({3}, bv);
      std::vector<float> want;
      for (size_t i = 0; i < a.size(); ++i) {
        float v = c.ref(a[i], bv[i % 3]);
        if (clamp && reads_clamp) v = std::min(std::max(v, -0.25f), 0.25f);
        want.push_back(v);
      }
      expect_near_all(run(b, {&ta, &tb}, {2, 3}), want, 1e-6f);
    }
  }
}

TEST(XnnpackNodesTest, PReluWithConstantSlopePerChannel) {
  PayloadBuilder b;
  const std::vector<float> slope = {0.1f, 0.5f, 2.0f};
  auto* n = b.node<fb::_XNNNode2x1T>(Kind::XNNPReLU);
  n->input1_id = b.input({1, 2, 2, 3}, 0);
  n->input2_id = b.constant_f32({3}, slope);
  n->output_id = b.output({1, 2, 2, 3}, 1);
  const std::vector<float> x = random_values(12, 9);
  OwnedTensor t = float_tensor({1, 2, 2, 3}, x);
  std::vector<float> want;
  for (size_t i = 0; i < x.size(); ++i) want.push_back(x[i] > 0 ? x[i] : x[i] * slope[i % 3]);
  expect_near_all(run(b, {&t}, {1, 2, 2, 3}), want, 1e-6f);
}

// --- Fully-connected and matmul -------------------------------------------

std::vector<float> matmul(const std::vector<float>& x, const std::vector<float>& w_out_in,
                          const std::vector<float>* bias, size_t rows, size_t in, size_t out) {
  std::vector<float> y(rows * out);
  for (size_t r = 0; r < rows; ++r) {
    for (size_t o = 0; o < out; ++o) {
      double acc = bias != nullptr ? (*bias)[o] : 0.0;
      for (size_t k = 0; k < in; ++k) acc += double{x[r * in + k]} * w_out_in[o * in + k];
      y[r * out + o] = static_cast<float>(acc);
    }
  }
  return y;
}

TEST(XnnpackNodesTest, FullyConnectedTransposedWeightsWithoutBias) {
  // addmm/mm layout: weights [in, out] with XNN_FLAG_TRANSPOSE_WEIGHTS.
  const size_t rows = 3, in = 5, out = 4;
  const std::vector<float> w_in_out = random_values(in * out, 10);
  std::vector<float> w_out_in(in * out);
  for (size_t k = 0; k < in; ++k)
    for (size_t o = 0; o < out; ++o) w_out_in[o * in + k] = w_in_out[k * out + o];
  PayloadBuilder b;
  auto* fc = b.node<fb::XNNFullyConnectedT>(Kind::XNNFullyConnected);
  fc->input1_id = b.input({3, 5}, 0);
  fc->filter_id = b.constant_f32({5, 4}, w_in_out);
  fc->bias_id = kNone;
  fc->output_id = b.output({3, 4}, 1);
  fc->flags = 1;
  const std::vector<float> x = random_values(rows * in, 11);
  OwnedTensor t = float_tensor({3, 5}, x);
  expect_near_all(run(b, {&t}, {3, 4}), matmul(x, w_out_in, nullptr, rows, in, out), 1e-5f);
}

TEST(XnnpackNodesTest, BatchMatrixMultiply) {
  const std::vector<float> a = random_values(2 * 3 * 4, 12), c = random_values(2 * 4 * 5, 13);
  PayloadBuilder b;
  auto* n = b.node<fb::_XNNNode2x1T>(Kind::XNNBatchMatrixMultiply);
  n->input1_id = b.input({2, 3, 4}, 0);
  n->input2_id = b.input({2, 4, 5}, 1);
  n->output_id = b.output({2, 3, 5}, 2);
  OwnedTensor ta = float_tensor({2, 3, 4}, a), tc = float_tensor({2, 4, 5}, c);
  std::vector<float> want(2 * 3 * 5);
  for (size_t m = 0; m < 2; ++m)
    for (size_t i = 0; i < 3; ++i)
      for (size_t j = 0; j < 5; ++j) {
        double acc = 0;
        for (size_t k = 0; k < 4; ++k) acc += double{a[(m * 3 + i) * 4 + k]} * c[(m * 4 + k) * 5 + j];
        want[(m * 3 + i) * 5 + j] = static_cast<float>(acc);
      }
  expect_near_all(run(b, {&ta, &tc}, {2, 3, 5}), want, 1e-5f, 1e-6f);
}

// --- Convolutions (NHWC) ---------------------------------------------------

struct ConvShape {
  size_t n = 1, h, w, ic, oc, kh, kw, stride = 1, pad = 0, dilation = 1, groups = 1;
  size_t out_h() const { return (h + 2 * pad - dilation * (kh - 1) - 1) / stride + 1; }
  size_t out_w() const { return (w + 2 * pad - dilation * (kw - 1) - 1) / stride + 1; }
};

// filter [oc, kh, kw, ic/groups]
std::vector<float> conv_reference(const ConvShape& s, const std::vector<float>& x,
                                  const std::vector<float>& f, const std::vector<float>& bias) {
  const size_t oh = s.out_h(), ow = s.out_w(), icg = s.ic / s.groups, ocg = s.oc / s.groups;
  std::vector<float> y(s.n * oh * ow * s.oc);
  for (size_t n = 0; n < s.n; ++n)
    for (size_t oy = 0; oy < oh; ++oy)
      for (size_t ox = 0; ox < ow; ++ox)
        for (size_t o = 0; o < s.oc; ++o) {
          const size_t g = o / ocg;
          double acc = bias[o];
          for (size_t ky = 0; ky < s.kh; ++ky)
            for (size_t kx = 0; kx < s.kw; ++kx) {
              const long iy = static_cast<long>(oy * s.stride + ky * s.dilation) - static_cast<long>(s.pad);
              const long ix = static_cast<long>(ox * s.stride + kx * s.dilation) - static_cast<long>(s.pad);
              if (iy < 0 || ix < 0 || iy >= static_cast<long>(s.h) || ix >= static_cast<long>(s.w)) continue;
              for (size_t c = 0; c < icg; ++c) {
                acc += double{x[((n * s.h + iy) * s.w + ix) * s.ic + g * icg + c]} *
                       f[((o * s.kh + ky) * s.kw + kx) * icg + c];
              }
            }
          y[((n * oh + oy) * ow + ox) * s.oc + o] = static_cast<float>(acc);
        }
  return y;
}

fb::_XNNNodeConvT* conv_node(PayloadBuilder& b, Kind kind, const ConvShape& s) {
  auto* c = b.node<fb::_XNNNodeConvT>(kind);
  c->padding_top = c->padding_bottom = c->padding_left = c->padding_right = static_cast<uint32_t>(s.pad);
  c->kernel_height = s.kh, c->kernel_width = s.kw;
  c->subsampling_height = c->subsampling_width = static_cast<uint32_t>(s.stride);
  c->dilation_height = c->dilation_width = static_cast<uint32_t>(s.dilation);
  c->groups = static_cast<uint32_t>(s.groups);
  c->group_input_channels = static_cast<uint32_t>(s.ic / s.groups);
  c->group_output_channels = static_cast<uint32_t>(s.oc / s.groups);
  return c;
}

TEST(XnnpackNodesTest, Conv2dStridedPaddedDilatedGrouped) {
  for (const ConvShape& s : {ConvShape{1, 6, 5, 3, 4, 3, 3, 2, 1, 1, 1},
                            ConvShape{2, 7, 7, 4, 6, 3, 2, 1, 2, 2, 2}}) {
    const auto x = random_values(s.n * s.h * s.w * s.ic, 14);
    const auto f = random_values(s.oc * s.kh * s.kw * (s.ic / s.groups), 15);
    const auto bias = random_values(s.oc, 16);
    PayloadBuilder b;
    const uint32_t in = b.input(u32({SizesType(s.n), SizesType(s.h), SizesType(s.w), SizesType(s.ic)}), 0);
    const uint32_t fid = b.constant_f32({uint32_t(s.oc), uint32_t(s.kh), uint32_t(s.kw), uint32_t(s.ic / s.groups)}, f);
    const uint32_t bid = b.constant_f32({uint32_t(s.oc)}, bias);
    const std::vector<SizesType> out_shape = {SizesType(s.n), SizesType(s.out_h()), SizesType(s.out_w()), SizesType(s.oc)};
    const uint32_t out = b.output(u32(out_shape), 1);
    auto* c = conv_node(b, Kind::XNNConv2d, s);
    c->input1_id = in, c->filter_id = fid, c->bias_id = bid, c->output_id = out;
    OwnedTensor t = float_tensor({SizesType(s.n), SizesType(s.h), SizesType(s.w), SizesType(s.ic)}, x);
    expect_near_all(run(b, {&t}, out_shape), conv_reference(s, x, f, bias), 1e-4f, 1e-5f);
  }
}

TEST(XnnpackNodesTest, DepthwiseConv2dWithFusedRelu6) {
  const ConvShape s{1, 6, 6, 4, 4, 3, 3, 1, 1, 1, 4};
  const auto x = random_values(s.h * s.w * s.ic, 17);
  const auto f_dw = random_values(s.kh * s.kw * s.oc, 18);  // [1, kh, kw, oc]
  const auto bias = random_values(s.oc, 19);
  // The same weights as a grouped conv: [oc, kh, kw, 1].
  std::vector<float> f(s.oc * s.kh * s.kw);
  for (size_t o = 0; o < s.oc; ++o)
    for (size_t k = 0; k < s.kh * s.kw; ++k) f[o * s.kh * s.kw + k] = f_dw[k * s.oc + o];
  PayloadBuilder b;
  const uint32_t in = b.input({1, 6, 6, 4}, 0);
  const uint32_t fid = b.constant_f32({1, 3, 3, 4}, f_dw);
  const uint32_t bid = b.constant_f32({4}, bias);
  const uint32_t out = b.output({1, 6, 6, 4}, 1);
  auto* c = conv_node(b, Kind::XNNDepthwiseConv2d, s);
  c->group_input_channels = 1, c->group_output_channels = 1;
  c->input1_id = in, c->filter_id = fid, c->bias_id = bid, c->output_id = out;
  b.clamp_last(0.0f, 6.0f);
  OwnedTensor t = float_tensor({1, 6, 6, 4}, x);
  auto want = conv_reference(s, x, f, bias);
  for (float& v : want) v = std::min(std::max(v, 0.0f), 6.0f);
  expect_near_all(run(b, {&t}, {1, 6, 6, 4}), want, 1e-4f, 1e-5f);
}

TEST(XnnpackNodesTest, TransposedConv2dMatchesScatterReference) {
  // Deconvolution: each input pixel scatters kernel * value into the output.
  const size_t h = 3, w = 4, ic = 2, oc = 3, k = 3, stride = 2, pad = 1, adj = 1;
  const size_t oh = (h - 1) * stride - 2 * pad + k + adj, ow = (w - 1) * stride - 2 * pad + k + adj;
  const auto x = random_values(h * w * ic, 20);
  const auto f = random_values(oc * k * k * ic, 21);  // [oc, kh, kw, ic]
  const auto bias = random_values(oc, 22);
  std::vector<double> acc(oh * ow * oc);
  for (size_t i = 0; i < acc.size(); ++i) acc[i] = bias[i % oc];
  for (size_t iy = 0; iy < h; ++iy)
    for (size_t ix = 0; ix < w; ++ix)
      for (size_t ky = 0; ky < k; ++ky)
        for (size_t kx = 0; kx < k; ++kx) {
          const long oy = long(iy * stride + ky) - long(pad), ox = long(ix * stride + kx) - long(pad);
          if (oy < 0 || ox < 0 || oy >= long(oh) || ox >= long(ow)) continue;
          for (size_t o = 0; o < oc; ++o)
            for (size_t c = 0; c < ic; ++c)
              acc[(oy * ow + ox) * oc + o] += double{x[(iy * w + ix) * ic + c]} * f[((o * k + ky) * k + kx) * ic + c];
        }
  std::vector<float> want(acc.begin(), acc.end());
  PayloadBuilder b;
  const uint32_t in = b.input({1, uint32_t(h), uint32_t(w), uint32_t(ic)}, 0);
  const uint32_t fid = b.constant_f32({uint32_t(oc), uint32_t(k), uint32_t(k), uint32_t(ic)}, f);
  const uint32_t bid = b.constant_f32({uint32_t(oc)}, bias);
  const uint32_t out = b.output({1, uint32_t(oh), uint32_t(ow), uint32_t(oc)}, 1);
  ConvShape s{1, h, w, ic, oc, k, k, stride, pad, 1, 1};
  auto* c = conv_node(b, Kind::XNNConvTranspose2d, s);
  c->adjustment_height = c->adjustment_width = uint32_t(adj);
  c->input1_id = in, c->filter_id = fid, c->bias_id = bid, c->output_id = out;
  OwnedTensor t = float_tensor({1, SizesType(h), SizesType(w), SizesType(ic)}, x);
  expect_near_all(run(b, {&t}, {1, SizesType(oh), SizesType(ow), SizesType(oc)}), want, 1e-4f, 1e-5f);
}

// --- Pooling -------------------------------------------------------------

std::vector<float> pool_reference(const std::vector<float>& x, size_t h, size_t w, size_t c,
                                  size_t k, size_t stride, bool max) {
  const size_t oh = (h - k) / stride + 1, ow = (w - k) / stride + 1;
  std::vector<float> y(oh * ow * c);
  for (size_t oy = 0; oy < oh; ++oy)
    for (size_t ox = 0; ox < ow; ++ox)
      for (size_t ch = 0; ch < c; ++ch) {
        double acc = max ? -INFINITY : 0.0;
        for (size_t ky = 0; ky < k; ++ky)
          for (size_t kx = 0; kx < k; ++kx) {
            const float v = x[((oy * stride + ky) * w + ox * stride + kx) * c + ch];
            acc = max ? std::max(acc, double{v}) : acc + v;
          }
        y[(oy * ow + ox) * c + ch] = static_cast<float>(max ? acc : acc / (k * k));
      }
  return y;
}

TEST(XnnpackNodesTest, MaxAndAveragePooling) {
  const auto x = random_values(6 * 6 * 3, 23);
  for (Kind kind : {Kind::XNNMaxPooling2d, Kind::XNNAvgPooling2d}) {
    SCOPED_TRACE(fb::EnumNameXNodeUnion(kind));
    PayloadBuilder b;
    auto* p = b.node<fb::_XNNPooling2DT>(kind);
    p->pooling_height = p->pooling_width = 2;
    p->stride_height = p->stride_width = 2;
    p->dilation_height = p->dilation_width = 1;
    p->input_id = b.input({1, 6, 6, 3}, 0);
    p->output_id = b.output({1, 3, 3, 3}, 1);
    p->flags = 0x40;
    OwnedTensor t = float_tensor({1, 6, 6, 3}, x);
    expect_near_all(run(b, {&t}, {1, 3, 3, 3}),
                    pool_reference(x, 6, 6, 3, 2, 2, kind == Kind::XNNMaxPooling2d), 1e-6f);
  }
}

TEST(XnnpackNodesTest, GlobalAveragePoolingKeepsDims) {
  const auto x = random_values(2 * 3 * 4 * 5, 24);
  PayloadBuilder b;
  auto* p = b.node<fb::_XNNNode1x1T>(Kind::XNNGlobalAvgPooling2d);
  p->input_id = b.input({2, 3, 4, 5}, 0);
  p->output_id = b.output({2, 1, 1, 5}, 1);
  p->flags = 0x40;
  OwnedTensor t = float_tensor({2, 3, 4, 5}, x);
  std::vector<float> want(2 * 5, 0.0f);
  for (size_t n = 0; n < 2; ++n)
    for (size_t i = 0; i < 12; ++i)
      for (size_t c = 0; c < 5; ++c) want[n * 5 + c] += x[(n * 12 + i) * 5 + c] / 12.0f;
  expect_near_all(run(b, {&t}, {2, 1, 1, 5}), want, 1e-5f);
}

// --- Shape and data movement ---------------------------------------------

TEST(XnnpackNodesTest, StaticTransposeToNhwc) {
  const auto x = random_values(2 * 3 * 4 * 5, 25);
  PayloadBuilder b;
  auto* n = b.node<fb::XNNStaticTransposeT>(Kind::XNNStaticTranspose);
  n->num_dims = 4;
  n->perm = {0, 2, 3, 1};
  n->input_id = b.input({2, 3, 4, 5}, 0);
  n->output_id = b.output({2, 4, 5, 3}, 1);
  OwnedTensor t = float_tensor({2, 3, 4, 5}, x);
  std::vector<float> want(x.size());
  for (size_t a = 0; a < 2; ++a)
    for (size_t c = 0; c < 3; ++c)
      for (size_t h = 0; h < 4; ++h)
        for (size_t w = 0; w < 5; ++w) want[((a * 4 + h) * 5 + w) * 3 + c] = x[((a * 3 + c) * 4 + h) * 5 + w];
  expect_near_all(run(b, {&t}, {2, 4, 5, 3}), want, 0);
}

TEST(XnnpackNodesTest, StaticReshapeKeepsOrder) {
  const auto x = random_values(12, 26);
  PayloadBuilder b;
  auto* n = b.node<fb::XNNStaticReshapeT>(Kind::XNNStaticReshape);
  n->num_dims = 3;
  n->new_shape = {3, 2, 2};
  n->input_id = b.input({2, 6}, 0);
  n->output_id = b.output({3, 2, 2}, 1);
  OwnedTensor t = float_tensor({2, 6}, x);
  expect_near_all(run(b, {&t}, {3, 2, 2}), x, 0);
}

TEST(XnnpackNodesTest, StaticSlice) {
  const auto x = random_values(4 * 5, 27);
  PayloadBuilder b;
  auto* n = b.node<fb::XNNStaticSliceT>(Kind::XNNStaticSlice);
  n->num_dims = 2;
  n->offsets = {1, 2};
  n->sizes = {2, 3};
  n->input_id = b.input({4, 5}, 0);
  n->output_id = b.output({2, 3}, 1);
  OwnedTensor t = float_tensor({4, 5}, x);
  std::vector<float> want;
  for (size_t r = 1; r < 3; ++r)
    for (size_t c = 2; c < 5; ++c) want.push_back(x[r * 5 + c]);
  expect_near_all(run(b, {&t}, {2, 3}), want, 0);
}

TEST(XnnpackNodesTest, StaticConstantPad) {
  const auto x = random_values(2 * 3, 28);
  PayloadBuilder b;
  auto* n = b.node<fb::XNNStaticConstantPadT>(Kind::XNNStaticConstantPad);
  n->pre_paddings = {1, 0};
  n->post_paddings = {0, 2};
  n->padding_value = 7.5f;
  n->input_id = b.input({2, 3}, 0);
  n->output_id = b.output({3, 5}, 1);
  OwnedTensor t = float_tensor({2, 3}, x);
  std::vector<float> want(15, 7.5f);
  for (size_t r = 0; r < 2; ++r)
    for (size_t c = 0; c < 3; ++c) want[(r + 1) * 5 + c] = x[r * 3 + c];
  expect_near_all(run(b, {&t}, {3, 5}), want, 0);
}

TEST(XnnpackNodesTest, ConcatenateTwoToFiveInputs) {
  const Kind kinds[] = {Kind::XNNConcatenate2, Kind::XNNConcatenate3, Kind::XNNConcatenate4,
                        Kind::XNNConcatenate5};
  for (int count = 2; count <= 5; ++count) {
    SCOPED_TRACE(count);
    PayloadBuilder b;
    std::vector<OwnedTensor> tensors;
    std::vector<std::vector<float>> parts;
    uint32_t ids[5] = {kNone, kNone, kNone, kNone, kNone};
    for (int i = 0; i < count; ++i) {
      const SizesType width = i + 1;
      parts.push_back(random_values(2 * width, 30 + i));
      ids[i] = b.input({2, uint32_t(width)}, uint32_t(i));
      tensors.push_back(float_tensor({2, width}, parts.back()));
    }
    const SizesType total = count * (count + 1) / 2;
    const uint32_t out = b.output({2, uint32_t(total)}, uint32_t(count));
    auto* n = b.node<fb::_XNNCatT>(kinds[count - 2]);
    n->axis = 1;
    n->input1_id = ids[0], n->input2_id = ids[1], n->input3_id = ids[2], n->input4_id = ids[3],
    n->input5_id = ids[4];
    n->output_id = out;
    std::vector<float> want;
    for (size_t r = 0; r < 2; ++r)
      for (int i = 0; i < count; ++i)
        for (int c = 0; c <= i; ++c) want.push_back(parts[i][r * (i + 1) + c]);
    std::vector<OwnedTensor*> inputs;
    for (auto& t : tensors) inputs.push_back(&t);
    expect_near_all(run(b, inputs, {2, total}), want, 0);
  }
}

TEST(XnnpackNodesTest, SoftmaxOverLastDim) {
  auto x = random_values(3 * 6, 35);
  for (float& v : x) v *= 5;
  PayloadBuilder b;
  auto* n = b.node<fb::_XNNNode1x1T>(Kind::XNNSoftmax);
  n->input_id = b.input({3, 6}, 0);
  n->output_id = b.output({3, 6}, 1);
  OwnedTensor t = float_tensor({3, 6}, x);
  std::vector<float> want(x.size());
  for (size_t r = 0; r < 3; ++r) {
    double m = -INFINITY, sum = 0;
    for (size_t c = 0; c < 6; ++c) m = std::max(m, double{x[r * 6 + c]});
    for (size_t c = 0; c < 6; ++c) sum += std::exp(x[r * 6 + c] - m);
    for (size_t c = 0; c < 6; ++c) want[r * 6 + c] = static_cast<float>(std::exp(x[r * 6 + c] - m) / sum);
  }
  expect_near_all(run(b, {&t}, {3, 6}), want, 1e-5f, 1e-7f);
}

TEST(XnnpackNodesTest, BilinearResizeAlignCorners) {
  const size_t h = 3, w = 4, c = 2, oh = 5, ow = 7;
  const auto x = random_values(h * w * c, 36);
  PayloadBuilder b;
  auto* n = b.node<fb::XNNStaticResizeBilinear2DT>(Kind::XNNStaticResizeBilinear2D);
  n->new_height = oh, n->new_width = ow;
  n->flags = 0x8;  // XNN_FLAG_ALIGN_CORNERS
  n->input_id = b.input({1, uint32_t(h), uint32_t(w), uint32_t(c)}, 0);
  n->output_id = b.output({1, uint32_t(oh), uint32_t(ow), uint32_t(c)}, 1);
  OwnedTensor t = float_tensor({1, SizesType(h), SizesType(w), SizesType(c)}, x);
  std::vector<float> want;
  for (size_t oy = 0; oy < oh; ++oy)
    for (size_t ox = 0; ox < ow; ++ox)
      for (size_t ch = 0; ch < c; ++ch) {
        const double fy = double(oy) * (h - 1) / (oh - 1), fx = double(ox) * (w - 1) / (ow - 1);
        const size_t y0 = size_t(fy), x0 = size_t(fx);
        const size_t y1 = std::min(y0 + 1, h - 1), x1 = std::min(x0 + 1, w - 1);
        const double dy = fy - y0, dx = fx - x0;
        auto at = [&](size_t yy, size_t xx) { return double{x[(yy * w + xx) * c + ch]}; };
        want.push_back(static_cast<float>((1 - dy) * ((1 - dx) * at(y0, x0) + dx * at(y0, x1)) +
                                          dy * ((1 - dx) * at(y1, x0) + dx * at(y1, x1))));
      }
  expect_near_all(run(b, {&t}, {1, SizesType(oh), SizesType(ow), SizesType(c)}), want, 1e-5f, 1e-5f);
}

// --- fp16 ----------------------------------------------------------------

TEST(XnnpackNodesTest, Fp16AddMatchesHalfPrecisionReference) {
  const auto a = random_values(8, 37), c = random_values(8, 38);
  PayloadBuilder b;
  auto* n = b.node<fb::_XNNNode2x1T>(Kind::XNNAdd);
  n->input1_id = b.input({2, 4}, 0, DT::xnn_datatype_fp16);
  n->input2_id = b.input({2, 4}, 1, DT::xnn_datatype_fp16);
  n->output_id = b.output({2, 4}, 2, DT::xnn_datatype_fp16);
  std::vector<Half> ha, hc;
  for (size_t i = 0; i < 8; ++i) ha.emplace_back(a[i]), hc.emplace_back(c[i]);
  auto ta = OwnedTensor::from_values<Half>({2, 4}, ha);
  auto tc = OwnedTensor::from_values<Half>({2, 4}, hc);
  auto out = OwnedTensor::make(ScalarType::kHalf, {2, 4});
  ASSERT_TRUE(ta.ok() && tc.ok() && out.ok());
  const auto payload = b.build();
  LoadedDelegate d(payload);
  ASSERT_TRUE(d.status().ok()) << d.status().message();
  ASSERT_TRUE(d.execute({ta->evalue(), tc->evalue(), out->evalue()}).ok());
  const Half* y = out->tensor().const_data_ptr<Half>();
  for (size_t i = 0; i < 8; ++i) {
    const float want = static_cast<float>(Half(float(ha[i]) + float(hc[i])));
    EXPECT_NEAR(float(y[i]), want, 1e-3f) << i;
  }
}

}  // namespace
}  // namespace testing
}  // namespace xnnpack
}  // namespace torchlight
